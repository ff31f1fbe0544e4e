import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Subprocess

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Runs programs through swift-subprocess (posix_spawn), never Foundation's `Process`: on Linux its `run()` reads
/// past the end of a `readdir` buffer while listing `/proc/self/fd` and crashes now and then
/// (swiftlang/swift-corelibs-foundation#5472, Swift 6.3.1) — seen here as a rare SIGSEGV in the test suite.
enum CommandRunner {
    /// The most output kept from a program (a token is a few KiB).
    static let outputLimit = 1 << 20

    package struct Output: Sendable {
        package var status: Int32
        var stdout: String
        var stderr: String

        package init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    package enum Failure: Error {
        case cannotStart(String)
        case timedOut
    }

    /// The executable for `name`: a path as given, else looked up on `PATH`.
    static func executable(_ name: String) -> Executable {
        name.contains("/") ? .path(FilePath(name)) : .name(name)
    }

    /// Runs `arguments` and collects its output; past `timeout` the program is killed (swift-subprocess tears a
    /// cancelled run down with SIGKILL) and ``Failure/timedOut`` is thrown.
    package static func run(_ arguments: [String], timeout: Duration) async throws(Failure) -> Output {
        guard let program = arguments.first else { throw .cannotStart("no program given") }
        do {
            return try await withThrowingTaskGroup(of: Output?.self) { group in
                group.addTask {
                    let result = try await Subprocess.run(
                        executable(program), arguments: Arguments(Array(arguments.dropFirst())), input: .none,
                        output: .string(limit: outputLimit), error: .string(limit: outputLimit))
                    return Output(
                        status: status(result.terminationStatus), stdout: result.standardOutput,
                        stderr: result.standardError)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let output = first else { throw Failure.timedOut }
                return output
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .cannotStart("\(error)")
        }
    }

    /// An exit code, or 128 + the signal that ended the program (the shell's convention).
    package static func status(_ termination: TerminationStatus) -> Int32 {
        switch termination {
        case .exited(let code): Int32(code)
        case .signaled(let signal): 128 + Int32(signal)
        }
    }
}
