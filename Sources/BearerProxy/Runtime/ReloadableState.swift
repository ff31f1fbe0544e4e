import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one owner of what is installed: the generation in force (``ProxyContext``) together with the account runtime
/// behind it, replaced in one step by a reload, with what is needed to build the next one the same way as the first.
/// The data plane reads it once per exchange (``GenerationSource``).
final class ReloadableState: GenerationSource {
    /// One installed generation: the data plane's view of a configuration and the account whose tokens it serves.
    struct Generation: Sendable {
        let context: ProxyContext
        let account: AccountRuntime
    }

    private let slot = Mutex<Generation?>(nil)
    let stateDirectory: StateDirectory?
    let environment: [String: String]
    let logger: Logger
    /// The wall clock a test injected, or nil for the system's (``AccountRuntime/make``).
    let now: (@Sendable () -> Date)?

    init(
        stateDirectory: StateDirectory?, environment: [String: String], logger: Logger,
        now: (@Sendable () -> Date)?
    ) {
        self.stateDirectory = stateDirectory
        self.environment = environment
        self.logger = logger
        self.now = now
    }

    /// The account in force. A ``RunningProxy`` exists only once its first generation is installed.
    var account: AccountRuntime {
        guard let account = slot.withLock({ $0?.account }) else {
            preconditionFailure("RunningProxy.start installs a generation before returning")
        }
        return account
    }

    func beginExchange() -> ProxyContext? {
        slot.withLock { generation in
            generation?.context.exchangeBegan()
            return generation?.context
        }
    }

    /// Puts `generation` in force for every exchange from now on and returns the one it replaces.
    @discardableResult
    func install(_ generation: Generation) -> Generation? {
        slot.withLock { current in
            defer { current = generation }
            return current
        }
    }
}
