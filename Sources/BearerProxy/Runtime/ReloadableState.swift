import Foundation
import Logging
import Synchronization

/// The part of a running proxy that a reload replaces (the account runtime), with what is needed to build the
/// next one the same way as the first.
final class ReloadableState: Sendable {
    private let slot: Mutex<AccountRuntime>
    let stateDirectory: StateDirectory?
    let environment: [String: String]
    let logger: Logger
    let now: @Sendable () -> Date

    init(
        account: AccountRuntime, stateDirectory: StateDirectory?, environment: [String: String], logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        slot = Mutex(account)
        self.stateDirectory = stateDirectory
        self.environment = environment
        self.logger = logger
        self.now = now
    }

    var account: AccountRuntime { slot.withLock { $0 } }

    func replace(with account: AccountRuntime) -> AccountRuntime {
        slot.withLock { current in
            let old = current
            current = account
            return old
        }
    }
}
