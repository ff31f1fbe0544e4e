import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The composition root: the one place that picks concrete implementations and wires a configuration into a
/// listening proxy. `bearer-proxy serve` and the end-to-end tests both start the proxy through it, so the tests
/// exercise exactly what users run.
public struct RunningProxy: Sendable {
    public let server: ProxyServer
    public let group: MultiThreadedEventLoopGroup
    let metrics: ProxyMetrics
    /// What a reload needs to build the next configuration's runtime the same way.
    let current: ReloadableState

    /// The account in force: its flow, token cache, session and token cache file.
    public var account: AccountRuntime { current.account }

    public var tokens: TokenCache { account.tokens }
    /// The embedded issuer, for the `dev` account.
    var devIssuer: DevIssuer? { account.devIssuer }

    /// Binds `listeners` (or the configuration's) and starts serving `configuration`.
    ///
    /// - Parameters:
    ///   - stateDirectory: where the token cache file and the dev issuer's key live; nil keeps everything in
    ///     memory (`--no-persist`).
    ///   - threads: event loops; defaults to one per core.
    ///   - peerLookup: how the owner of a loopback peer's socket is found (SPEC §9); tests put a fixed or failing
    ///     one in.
    ///   - beforeServing: runs once the account is ready and before requests are served (`serve`'s sign-in).
    public static func start(
        configuration: Configuration, listeners: [Listener]? = nil, stateDirectory: StateDirectory?,
        environment: [String: String] = [:], timeouts: ProxyTimeouts = ProxyTimeouts(), maximumConnections: Int? = nil,
        threads: Int = System.coreCount, logger: Logger, now: (@Sendable () -> Date)? = nil,
        peerLookup: PeerUserPolicy.Lookup = .kernel, signInConsole: (any SignInConsole)? = nil,
        beforeServing: (@Sendable (AccountRuntime) async throws -> Void)? = nil
    ) async throws -> RunningProxy {
        let listeners = listeners ?? configuration.listeners
        // The reader never makes an empty list; a configuration built in code could.
        guard !listeners.isEmpty else {
            throw StartupError.cannotListen(address: "listen", reason: "nothing to listen on")
        }
        let policy = try SafetyPolicy.make(
            for: configuration, listeners: listeners, environment: environment, peerLookup: peerLookup)
        for listener in listeners where !listener.isLocal {
            logger.warning(
                "listening on non-loopback address \(listener): \(policy.clientKey == nil ? "allowRemote is set and no client key is required — anyone who can reach it acts as this account" : "every request must carry the client key")"
            )
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let metrics = ProxyMetrics()
        // The sign-ins `serve` opens itself, for routes that opt in: only with a browser and a state directory.
        var signInStarter: DiscoveredSignInStarter?
        if let stateDirectory, let signInConsole {
            signInStarter = DiscoveredSignInStarter(
                stateDirectory: stateDirectory, console: signInConsole, environment: environment, logger: logger,
                now: now ?? { Date() })
        }
        let state = ReloadableState(
            stateDirectory: stateDirectory, environment: environment, logger: logger, now: now,
            peerLookup: peerLookup, signInStarter: signInStarter)
        let server: ProxyServer
        do {
            server = try await ProxyServer.bind(
                to: listeners, group: group, generations: state, timeouts: timeouts,
                maximumConnections: maximumConnections, metrics: metrics, logger: logger)
        } catch let failure as Acceptor.Failure {
            try? await group.shutdownGracefully()
            throw StartupError.cannotListen(address: failure.listener.description, reason: failure.reason)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        let bound = server.listeners
        do {
            let account = try AccountRuntime.make(
                configuration: configuration, stateDirectory: stateDirectory, environment: environment,
                eventLoopGroup: group, devIssuerURL: DevIssuer.issuerURL(listeningOn: bound),
                logger: logger, metrics: metrics, now: now, signInStarter: signInStarter)
            for notice in account.notices { logger.warning("\(notice)") }
            // A sign-in at start-up happens here: the port is already ours (a taken port is reported before anyone
            // types a password), and requests meanwhile get 503 "starting" rather than 401.
            try await beforeServing?(account)
            state.install(
                try generation(
                    configuration, account: account, policy: policy, server: server, metrics: metrics,
                    nonces: state.upstreamNonces))
            return RunningProxy(server: server, group: group, metrics: metrics, current: state)
        } catch {
            await server.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The generation that serves `configuration` with `account`'s tokens, and the upstream DPoP `nonces` every
    /// generation shares.
    static func generation(
        _ configuration: Configuration, account: AccountRuntime, policy: SafetyPolicy, server: ProxyServer,
        metrics: ProxyMetrics, nonces: UpstreamNonceStore
    ) throws -> ReloadableState.Generation {
        let context = try ProxyContext(
            configuration: configuration, tokens: account.tokens,
            admin: AdminEndpoints(
                account: account, metrics: metrics, requestCounts: { await server.requestCounts() },
                access: AccessSummary(
                    configuration: configuration, listeners: server.listeners,
                    peerUserCheck: PeerUserPolicy.isAvailable)),
            policy: policy,
            timeouts: server.timeouts, discoveredTokens: account.discovered.caches(for: configuration),
            subjectTokens: account.onBehalfOf.caches(for: configuration), nonces: nonces)
        return ReloadableState.Generation(context: context, account: account)
    }

    /// Stops accepting, drains in-flight exchanges (bounded), writes pending token changes and releases the loops.
    public func shutdown() async throws {
        // A request waiting for a `login ROUTE` in progress is answered now, not when that wait ends.
        account.discovered.stopWaiting()
        current.signInStarter?.stopWaiting()
        await server.shutdown()
        await shutdownAccounts()
        try await group.shutdownGracefully()
    }

    /// The service that opens the sign-ins `serve` starts itself (`"signIn": "auto"`, SPEC §6.3): `serve` runs it
    /// beside the server; nil without a browser or a state directory.
    public var signInStarter: (any Service)? { current.signInStarter }

    /// Writes pending token changes and closes the identity provider clients of every account still alive: the one
    /// in force and those that replaced generations kept (call it once the server has drained).
    public func shutdownAccounts() async {
        for account in current.releaseAll() { await account.shutdown() }
    }

    /// How many generations that a reload replaced are still kept for their exchanges.
    var retiringGenerations: Int { current.retiringCount }

    package init(
        server: ProxyServer, group: MultiThreadedEventLoopGroup, metrics: ProxyMetrics, current: ReloadableState
    ) {
        self.server = server
        self.group = group
        self.metrics = metrics
        self.current = current
    }
}
