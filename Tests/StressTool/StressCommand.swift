import ArgumentParser
import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import StateStress

/// `bearer-proxy-stress`, a test-only executable (it ships in no product): many read-modify-write cycles on a token
/// cache file, so a test can kill the process mid-write or run two at once and check that nothing is torn or lost;
/// or, with `--hold-redemption-lock`, a process that takes the account's redemption lock, prints `held` and waits
/// to be killed.
@main
struct StressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bearer-proxy-stress")

    @Option(name: .long) var stateDir: String
    @Option(name: .long) var account: String
    @Option(name: .long) var iterations: Int = 0
    @Flag(name: .long) var holdRedemptionLock = false

    func run() throws {
        let directory = StateDirectory(path: stateDir)
        if holdRedemptionLock {
            let lock = RedemptionLock(store: TokenStore(directory: directory, accountKey: account))
            try LockHolding.holdUntilKilled(lock, directory: directory) {
                StateStress.reportToStandardOutput(line: "held")
            }
        }
        try StateStress.runWriter(directory: directory, accountKey: account, iterations: iterations)
    }
}
