import Foundation
import Subprocess
import Synchronization

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// `bearer-proxy-stress` (a test-only executable) as a child process: a real second process writing the token cache with our code.
///
/// The child prints the number of updates it has completed, one per line (``StateStress/runWriter``), which is
/// how the test knows how far it got — no sleeping and hoping. A watchdog kills it after a minute so a hung child
/// fails the test instead of hanging it. It runs through swift-subprocess (see ``ChildProcess``), inside the scope
/// of ``run(state:accountKey:iterations:watchdog:_:)``: a test that fails half-way leaves no writer running.
enum StressProcess {
    /// The test-only `bearer-proxy-stress` executable: the products directory holds it next to the test bundle.
    static var executable: String {
        let products =
            Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return products.appendingPathComponent("bearer-proxy-stress").path
    }

    /// How the child ended.
    struct Exit: Sendable {
        var termination: TerminationStatus
        var stderr: String
        var killed: Bool { termination == .signaled(SIGKILL) }
        var succeeded: Bool { termination == .exited(0) }
    }

    /// Starts a writer that makes `iterations` updates to `accountKey`'s cache in `state`, and runs `body` with it;
    /// returns what the body returned and, once the child has ended, how. The body may end it early
    /// (``Child/kill(onceExists:)``); otherwise the child runs to its end — or until `watchdog` has passed since its
    /// start, when it is killed.
    static func run<Value: Sendable>(
        state: StateDirectory, accountKey: String, iterations: Int, watchdog: Duration = .seconds(60),
        _ body: (Child) async throws -> Value
    ) async throws -> (value: Value, exit: Exit) {
        let executable = Self.executable
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw StressProcessError(description: "no bearer-proxy-stress executable at \(executable)")
        }
        let stderr = Collected()
        do {
            let result = try await Subprocess.run(
                CommandRunner.executable(executable),
                arguments: [
                    "--state-dir", state.path, "--account", accountKey, "--iterations",
                    String(iterations),
                ],
                input: .none, output: .sequence, error: .sequence
            ) { execution in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let (progress, reported) = AsyncStream<Int>.makeStream()
                    let (errorsEnded, errorsFinished) = AsyncStream<Never>.makeStream()
                    group.addTask {
                        defer { reported.finish() }
                        for try await line in execution.standardOutput.strings() {
                            if let number = Int(line) { reported.yield(number) }
                        }
                    }
                    group.addTask {
                        defer { errorsFinished.finish() }
                        for try await buffer in execution.standardError {
                            buffer.withUnsafeBytes { stderr.append(Data($0)) }
                        }
                    }
                    group.addTask {
                        // Fires only for a child still running after `watchdog` (cancelled once it has ended).
                        guard (try? await Task.sleep(for: watchdog)) != nil else { return }
                        try? execution.send(signal: .kill)
                    }
                    let child = Child(execution, progress: progress, errorsEnded: errorsEnded)
                    let value: Value
                    do {
                        value = try await body(child)
                    } catch {
                        // Killed now, so its output ends and the readers above with it (see ChildProcess.withRunning).
                        try? execution.send(signal: .kill)
                        throw error
                    }
                    // The child has ended (or ends by itself): read what is left of its output, then stop the
                    // watchdog.
                    await child.drain()
                    for await _ in errorsEnded {}
                    group.cancelAll()
                    try await group.waitForAll()
                    return value
                }
            }
            return (result.closureResult, Exit(termination: result.terminationStatus, stderr: stderr.text))
        } catch let stopped as Child.Stopped {
            throw StressProcessError(
                description: "bearer-proxy-stress stopped after \(stopped.completed) updates: \(stderr.text)")
        }
    }

    /// The running child, as the body of ``run(state:accountKey:iterations:watchdog:_:)`` sees it. Not Sendable:
    /// the body drives it from one task.
    final class Child {
        let processIdentifier: pid_t
        /// The highest number of completed updates the child has reported.
        private(set) var completed = 0
        private var progress: AsyncStream<Int>.Iterator
        private let errorsEnded: AsyncStream<Never>
        private let sendKill: @Sendable () -> Void

        /// The writer name the child uses in the tokens it adds.
        var writer: String { "pid-\(processIdentifier)" }

        fileprivate init<Input, Output, Error>(
            _ execution: Execution<Input, Output, Error>, progress: AsyncStream<Int>, errorsEnded: AsyncStream<Never>
        ) {
            processIdentifier = execution.processIdentifier.value
            self.progress = progress.makeAsyncIterator()
            self.errorsEnded = errorsEnded
            sendKill = { try? execution.send(signal: .kill) }
        }

        /// The child ended before it reported as many updates as awaited.
        fileprivate struct Stopped: Error {
            var completed: Int
        }

        /// Waits until the child reports at least `count` completed updates; returns the number reported. Throws,
        /// with the child's stderr, if it ends first.
        func waitForProgress(atLeast count: Int) async throws -> Int {
            while completed < count {
                guard let number = await progress.next() else {
                    for await _ in errorsEnded {}
                    throw Stopped(completed: completed)
                }
                completed = max(completed, number)
            }
            return completed
        }

        /// Sends SIGKILL, waits for the child's output to end (it has died), and returns how many updates it
        /// reported in all. With `path`, first spins until `path` exists — for a temporary file, until the child is
        /// between creating it and renaming it into place — or ten seconds pass, and kills it the moment it does: on
        /// a thread of its own, with no sleep and no hop between seeing the file and the kill, because the window
        /// lasts a few writes and an fsync and only a tight loop reliably lands in it.
        func kill(onceExists path: String? = nil) async -> Int {
            let kill = sendKill
            if let path {
                _ = try? await BlockingWork.run {
                    let deadline = ContinuousClock.now + .seconds(10)
                    while ContinuousClock.now < deadline {
                        if access(path, F_OK) == 0 { break }
                    }
                    kill()
                }
            } else {
                kill()
            }
            await drain()
            return completed
        }

        /// Reads the rest of the child's progress, until its stdout ends.
        fileprivate func drain() async {
            while let number = await progress.next() { completed = max(completed, number) }
        }
    }

    /// The child's stderr, collected as it comes (kept outside the run so an error can quote it).
    private final class Collected: Sendable {
        private let bytes = Mutex(Data())

        func append(_ data: Data) {
            bytes.withLock { $0.append(data) }
        }

        var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
    }
}

/// The stress child could not be run, or stopped unexpectedly.
struct StressProcessError: Error, CustomStringConvertible {
    var description: String
}
