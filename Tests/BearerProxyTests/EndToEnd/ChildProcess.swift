import Foundation
import Subprocess

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Runs programs for the tests through swift-subprocess, never Foundation's `Process`: on Linux its `run()` reads
/// past the end of a `readdir` buffer and now and then crashes the whole test process
/// (swiftlang/swift-corelibs-foundation#5472; see ``CommandRunner``).
///
/// Every child lives inside a scope: ``withRunning(_:_:stdin:environment:_:)`` returns only once it has exited, and
/// if the body throws (or the test is cancelled) swift-subprocess kills it with SIGKILL — a failing test leaves no
/// `serve` behind. A child still running ``TestLimits/child`` after its start is killed and the test fails
/// (``ChildWatchdog``).
enum ChildProcess {
    struct Output: Sendable {
        /// The exit code, or 128 + the signal that ended the program (as ``CommandRunner/status(_:)``).
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A child while the body of ``withRunning(_:_:stdin:environment:_:)`` (or ``PseudoTerminal/run``) runs: it
    /// is not reaped before the body returns, so its process id cannot have been reused.
    struct Running: Sendable {
        let processIdentifier: pid_t
        private let send: @Sendable (Int32) -> Void

        init<Input, Output, Error>(_ execution: Execution<Input, Output, Error>) {
            processIdentifier = execution.processIdentifier.value
            send = { signal in try? execution.send(signal: Subprocess.Signal(rawValue: signal)) }
        }

        func signal(_ signal: Int32) {
            send(signal)
        }
    }

    /// Runs a program to completion with `stdin` as its input; its output is collected.
    static func run(
        _ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil
    ) async throws -> Python.Result {
        let (_, output) = try await withRunning(executable, arguments, stdin: stdin, environment: environment) { _ in }
        return Python.Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// Starts a program with `stdin` as its input (then end of file) and runs `body` while it runs; returns what the
    /// body returned and, once the program has exited, its status and everything it printed (collected all along,
    /// so it never blocks on a full pipe). The body ends the program if it would not end by itself (`signal`).
    /// `environment` nil inherits ours. `errorLines`, when given, is handed each line of stderr the moment it is
    /// written and finished when stderr ends, for a body that acts on what the program says.
    static func withRunning<Value: Sendable>(
        _ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String]? = nil,
        errorLines: AsyncStream<String>.Continuation? = nil, _ body: (Running) async throws -> Value
    ) async throws -> (value: Value, output: Output) {
        let what = ([executable] + arguments).joined(separator: " ")
        let result = try await ChildWatchdog.run(what: what) { watchdog in
            try await Subprocess.run(
                CommandRunner.executable(executable), arguments: Arguments(arguments),
                environment: Self.environment(environment), input: .string(stdin), output: .string(limit: .max),
                error: .sequence
            ) { execution in
                let running = Running(execution)
                watchdog.arm { running.signal(SIGKILL) }
                let stderr = execution.standardError
                return try await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask { try await Self.collect(stderr, lines: errorLines) }
                    let value: Value
                    do {
                        value = try await body(running)
                    } catch {
                        // swift-subprocess kills the child too, but only once its own tasks for it have ended — and
                        // the ones collecting output and watching for the exit end only when the child exits: it
                        // would wait for a `serve`, not kill it.
                        running.signal(SIGKILL)
                        throw error
                    }
                    return (value, try await group.next() ?? "")
                }
            }
        }
        let output = Output(
            status: CommandRunner.status(result.terminationStatus), stdout: result.standardOutput,
            stderr: result.closureResult.1)
        return (result.closureResult.0, output)
    }

    /// Everything `stream` carries until its end, decoded as UTF-8; each line (split at `\n`, without it) also goes
    /// to `lines` as soon as it is complete, and `lines` is finished at the end.
    private static func collect(
        _ stream: SubprocessOutputSequence, lines: AsyncStream<String>.Continuation?
    ) async throws -> String {
        defer { lines?.finish() }
        var bytes: [UInt8] = []
        var lineStart = 0
        for try await buffer in stream {
            buffer.withUnsafeBytes { bytes.append(contentsOf: $0) }
            guard let lines else { continue }
            while let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                lines.yield(String(decoding: bytes[lineStart..<newline], as: UTF8.self))
                lineStart = newline + 1
            }
        }
        if lineStart < bytes.count { lines?.yield(String(decoding: bytes[lineStart...], as: UTF8.self)) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Exactly `variables`, or ours when nil.
    static func environment(_ variables: [String: String]?) -> Subprocess.Environment {
        guard let variables else { return .inherit }
        var custom: [Subprocess.Environment.Key: String] = [:]
        for (name, value) in variables {
            if let key = Subprocess.Environment.Key(rawValue: name) { custom[key] = value }
        }
        return .custom(custom)
    }
}
