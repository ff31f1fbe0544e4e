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

/// A `bearer-proxy` child whose stderr the test reads as it comes: `onLine` sees each line the moment it is written,
/// so a test can act once the child says it has reached a point (waiting for a lock) — no sleeping and hoping.
/// Like ``ChildProcess``, it runs inside the call's scope and is killed if the test is cancelled or it outlives
/// ``TestLimits/child``.
enum WatchedChild {
    struct Output: Sendable {
        var status: TerminationStatus
        var stdout: String
        var stderr: String
    }

    static func run(
        _ arguments: [String], environment: [String: String], onLine: @Sendable (String) -> Void
    ) async throws -> Output {
        let result = try await ChildWatchdog.run(what: "bearer-proxy " + arguments.joined(separator: " ")) {
            watchdog in
            try await Subprocess.run(
                CommandRunner.executable(CommandLineTests.binary), arguments: Arguments(arguments),
                environment: ChildProcess.environment(environment), input: .none, output: .string(limit: .max),
                error: .sequence
            ) { execution in
                watchdog.arm { try? execution.send(signal: .kill) }
                var lines: [String] = []
                for try await line in execution.standardError.strings() {
                    onLine(line)
                    lines.append(line)
                }
                return lines.joined(separator: "\n")
            }
        }
        return Output(status: result.terminationStatus, stdout: result.standardOutput, stderr: result.closureResult)
    }
}
