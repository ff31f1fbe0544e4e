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

/// `bearer-proxy-stress --hold-redemption-lock` as a child: another process that holds an account's
/// redemption lock — as one does in the middle of a token request — until the test kills it.
enum LockHolder {
    /// Starts the holder, waits until it says it holds the lock, and runs `body` with a way to SIGKILL it. The holder
    /// is killed when the body returns or throws, in any case, and by ``ChildWatchdog`` past ``TestLimits/child``;
    /// returns the body's value and how the holder ended.
    static func whileHeld<T: Sendable>(
        state: StateDirectory, accountKey: String, _ body: (_ kill: @escaping @Sendable () -> Void) async throws -> T
    ) async throws -> (value: T, termination: TerminationStatus) {
        let result = try await ChildWatchdog.run(what: "the redemption lock holder") { watchdog in
            try await Subprocess.run(
                CommandRunner.executable(StressProcess.executable),
                arguments: ["--state-dir", state.path, "--account", accountKey, "--hold-redemption-lock"],
                input: .none, output: .sequence, error: .discarded
            ) { execution in
                let kill: @Sendable () -> Void = { try? execution.send(signal: .kill) }
                watchdog.arm(kill)
                do {
                    var lines = execution.standardOutput.strings().makeAsyncIterator()
                    guard try await lines.next() == "held" else {
                        throw StressProcessError(description: "the lock holder ended before it held the lock")
                    }
                    let value = try await body(kill)
                    kill()
                    while try await lines.next() != nil {}
                    return value
                } catch {
                    kill()
                    throw error
                }
            }
        }
        return (result.closureResult, result.terminationStatus)
    }
}
