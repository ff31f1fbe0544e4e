import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one owner of what is installed: the generation in force (``ProxyContext``) together with the account runtime
/// behind it, replaced in one step by a reload, the generations it replaced that still have exchanges
/// (``RetiringGenerations``), and what is needed to build the next one the same way as the first. The data plane
/// reads it once per exchange (``GenerationSource``).
package final class ReloadableState: GenerationSource {
    /// One installed generation: the data plane's view of a configuration and the account whose tokens it serves.
    struct Generation: Sendable {
        let context: ProxyContext
        package let account: AccountRuntime

        init(context: ProxyContext, account: AccountRuntime) {
            self.context = context
            self.account = account
        }
    }

    private struct Installed: Sendable {
        var current: Generation?
        var retiring: RetiringGenerations
    }

    private let slot: Mutex<Installed>
    let stateDirectory: StateDirectory?
    package let environment: [String: String]
    let logger: Logger
    /// The wall clock a test injected, or nil for the system's (``AccountRuntime/make``).
    let now: (@Sendable () -> Date)?
    /// How the owner of a loopback peer's socket is found (``PeerUserPolicy``), the same for every generation.
    let peerLookup: PeerUserPolicy.Lookup
    /// The sign-ins `serve` opens itself for routes that opt in (`"signIn": "auto"`), the same for every generation;
    /// nil where no browser can be opened.
    package let signInStarter: DiscoveredSignInStarter?
    /// The upstreams' DPoP nonces (RFC 9449 §9), kept across reloads: they are the sign-ins' keys', not a
    /// configuration's.
    let upstreamNonces = UpstreamNonceStore()

    /// How long a replaced generation's exchanges keep its account alive after a reload.
    static let retirementLimit: Duration = .seconds(60)

    init(
        stateDirectory: StateDirectory?, environment: [String: String], logger: Logger,
        now: (@Sendable () -> Date)?, peerLookup: PeerUserPolicy.Lookup = .kernel,
        signInStarter: DiscoveredSignInStarter? = nil
    ) {
        self.signInStarter = signInStarter
        self.slot = Mutex(Installed(current: nil, retiring: RetiringGenerations(limit: Self.retirementLimit)))
        self.stateDirectory = stateDirectory
        self.environment = environment
        self.logger = logger
        self.now = now
        self.peerLookup = peerLookup
    }

    /// The account in force. A ``RunningProxy`` exists only once its first generation is installed.
    package var account: AccountRuntime {
        guard let account = slot.withLock({ $0.current?.account }) else {
            preconditionFailure("RunningProxy.start installs a generation before returning")
        }
        return account
    }

    /// The generation in force, without counting an exchange against it.
    var context: ProxyContext? {
        slot.withLock { $0.current?.context }
    }

    package func beginExchange() -> ProxyContext? {
        slot.withLock { installed in
            let context = installed.current?.context
            context?.exchangeBegan()
            return context
        }
    }

    package var peerUsers: PeerUserPolicy? {
        slot.withLock { $0.current?.context.requestGuard.policy.peerUsers }
    }

    /// Puts `generation` in force for every exchange from now on; the one it replaces is kept, with its account,
    /// until its last exchange has ended (``releaseRetired()``).
    func install(_ generation: Generation) {
        slot.withLock { installed in
            if let previous = installed.current { installed.retiring.add(previous, at: .now) }
            installed.current = generation
        }
    }

    /// How many replaced generations still have exchanges.
    var retiringCount: Int { slot.withLock { $0.retiring.count } }

    /// Lets go of the replaced generations that have drained (or outlived ``retirementLimit``) and returns the
    /// accounts nothing holds any longer, for the caller to shut down.
    func releaseRetired() -> [AccountRuntime] {
        slot.withLock { installed in
            guard let current = installed.current else { return [] }
            return installed.retiring.release(keeping: current.account, at: .now)
        }
    }

    /// Every account still alive — the installed one and those of replaced generations — for shutdown, once the
    /// server has drained.
    func releaseAll() -> [AccountRuntime] {
        slot.withLock { installed in
            guard let current = installed.current else { return [] }
            return [current.account] + installed.retiring.releaseAll(keeping: current.account)
        }
    }
}
