import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension RunningProxy {
    /// What a reload did.
    enum ReloadOutcome: Sendable, Equatable {
        /// The new configuration is in force for new requests; in-flight ones finish with the old one.
        case applied(accountChanged: Bool)
        /// The new file is invalid (every problem logged); the old configuration keeps serving.
        case rejected(problems: [String])
    }

    /// Re-reads `routes.json` (SIGHUP; SPEC §10). A valid file takes effect for new requests without touching
    /// in-flight ones; an invalid one is refused with every problem logged and the old one keeps serving. When the
    /// `account` section is unchanged the signed-in account and its cached tokens are kept.
    ///
    /// It never waits for the old generation's exchanges: they keep it, and its account, for as long as they last
    /// (bounded; ``RetiringGenerations``), while the next reload or a shutdown goes ahead at once (docs/operations.md).
    @discardableResult
    func reload(from path: String) async -> ReloadOutcome {
        await releaseRetiredAccounts()
        let state = current
        let logger = state.logger
        let configuration: Configuration
        do {
            configuration = try Configuration.load(path: path, environment: state.environment)
        } catch {
            let problems = error.problems.map(\.description)
            for problem in problems { logger.error("reload refused: \(path): \(problem)") }
            logger.error("reload refused: \(problems.count) problem(s); the previous configuration keeps serving")
            return .rejected(problems: problems)
        }
        let listeners = server.listeners
        let old = state.account
        if configuration.listeners != old.configuration.listeners {
            let written = configuration.listeners.map(\.description).joined(separator: ", ")
            logger.warning("reload: \"listen\" changed to \(written); it takes effect after a restart")
        }
        let accountChanged = configuration.account != old.configuration.account
        let account: AccountRuntime
        let generation: ReloadableState.Generation
        do {
            let policy = try SafetyPolicy.make(
                for: configuration, listeners: listeners, environment: state.environment, peerLookup: state.peerLookup)
            if accountChanged {
                account = try AccountRuntime.make(
                    configuration: configuration, stateDirectory: state.stateDirectory,
                    environment: state.environment, eventLoopGroup: group,
                    devIssuerURL: DevIssuer.issuerURL(listeningOn: listeners), logger: logger,
                    metrics: metrics, now: state.now, signInStarter: state.signInStarter)
            } else {
                account = old.with(configuration: configuration)
            }
            do {
                generation = try Self.generation(
                    configuration, account: account, policy: policy, server: server, metrics: metrics,
                    nonces: state.upstreamNonces)
            } catch {
                if accountChanged { await account.shutdown() }
                throw error
            }
        } catch {
            logger.error("reload refused: \(error); the previous configuration keeps serving")
            return .rejected(problems: ["\(error)"])
        }
        state.install(generation)
        for route in configuration.routes.routes {
            logger.info("route \(route.prefix) → \(route.upstream.url)")
        }
        let accountNote = accountChanged ? "new account (\(configuration.account.flow.rawValue))" : "same account"
        logger.info("reloaded \(path): \(configuration.routes.routes.count) routes, \(accountNote)")
        return .applied(accountChanged: accountChanged)
    }

    /// Shuts down the accounts of replaced generations whose exchanges have all ended (or outlived the retirement
    /// limit) and that no other generation uses. The token maintenance calls it once a second; a reload, before
    /// its own work.
    func releaseRetiredAccounts() async {
        for account in current.releaseRetired() {
            current.logger.debug("released the account of a replaced configuration")
            await account.shutdown()
        }
    }
}

/// Reloads `routes.json` on every SIGHUP, as a `Service` next to the proxy (SPEC §10).
public struct ConfigurationReloader: Service {
    let proxy: RunningProxy
    package let path: String

    public init(proxy: RunningProxy, path: String) {
        self.proxy = proxy
        self.path = path
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            await proxy.reload(from: path)
        }
    }
}
