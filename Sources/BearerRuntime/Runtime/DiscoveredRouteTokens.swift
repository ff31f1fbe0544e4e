import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Dispatch
import Logging
import NIOCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token caches of the discovered routes (SPEC §6.3), one per route, each over its own ``DiscoveredRouteFlow``:
/// apart from the account's cache, so a discovered route never receives the account's token and the account's refresh
/// token never reaches another authorization server. Kept across reloads, a route's cache made when a generation first
/// needs it.
///
/// A route that signs in at its own authorization server has a cache only with a state directory (the sign-in
/// `login ROUTE` stores is read from it); one whose authorization server is the account's own has one with or
/// without (`--no-persist`): it stores nothing of its own — no registration, no refresh token — and takes its tokens
/// from the account's cache, which then lives in memory.
package final class DiscoveredRouteTokens: Sendable {
    /// Where `login ROUTE` stores its sign-ins; nil without a state directory (`--no-persist`).
    package let store: DiscoveredSignInStore?
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let uptime: (@Sendable () -> Duration)?
    /// Where a configured client's `clientSecretEnv` is read.
    private let environment: [String: String]
    private let metrics: ProxyMetrics?
    /// The caches by route, and the HTTP clients of their token requests by the CA file they trust ("" for none) —
    /// each made with the first discovered route that needs it, so a configuration without one opens nothing. A
    /// route's authorization server is often on the route's own host, trusted through the route's own
    /// `tls.caFile`: its refreshes must trust that file, not only the global one. Discovery needs no client kept: each
    /// discovery has its own, pinned to the addresses judged for its requests (``PinnedConnections``).
    private let state = Mutex(State())
    /// The account's side of the routes whose authorization server is the account's own; nil for an account without an
    /// OAuth client.
    private let account: AccountSource?

    private struct State {
        var caches: [CacheName: TokenCache] = [:]
        var providers: [String: IdentityProviderClient] = [:]
        /// The flows of the routes whose authorization server is the account's, by prefix (for `status`).
        var accountFlows: [String: AccountRouteFlow] = [:]
        /// The flows of the routes with a sign-in of their own, by prefix (for `/-/status`: what memory holds unsaved).
        var signInFlows: [String: DiscoveredRouteFlow] = [:]
        /// Per cache, what brings it in line with the sign-in it serves (``followStoredSignIns()``).
        var followers: [CacheName: @Sendable () -> Void] = [:]
        /// Per cache of a route with a sign-in of its own, its last write at shutdown (``shutdown()``).
        var finishers: [CacheName: @Sendable () -> Void] = [:]
    }

    /// What a route whose authorization server is the account's own takes from the account.
    struct AccountSource: Sendable {
        /// The account's token cache.
        package var tokens: TokenCache
        /// The account's issuers (``IdentityEndpoint/issuers(tenantID:)``), asked each time.
        package var issuers: @Sendable () -> [String]
        /// The account's client id, for `status`.
        package var clientID: String

        init(tokens: TokenCache, issuers: @escaping @Sendable () -> [String], clientID: String) {
            self.tokens = tokens
            self.issuers = issuers
            self.clientID = clientID
        }
    }
    /// The sign-ins `serve` opens itself for routes with `"signIn": "auto"`; nil: none.
    private let signInStarter: DiscoveredSignInStarter?
    /// Given at shutdown: the routes' token requests stop waiting for a sign-in in progress.
    private let closing = ShutdownNotice()
    /// Where every route's ``StepUpRecord`` writes what its upstream last answered, in order, off the event loops.
    private let answers = DispatchQueue(label: "bearer-proxy.discovered-answers")

    /// What a route's cache is made from: a route that keeps all of it keeps its cache across reloads.
    private struct CacheName: Hashable {
        var prefix: String
        var upstream: String
        var caFile: String?
        var settings: DiscoverySettings
    }

    init(
        store: DiscoveredSignInStore?, eventLoopGroup: any EventLoopGroup, environment: [String: String],
        logger: Logger, metrics: ProxyMetrics? = nil, now: @escaping @Sendable () -> Date,
        uptime: (@Sendable () -> Duration)?, account: AccountSource? = nil,
        signInStarter: DiscoveredSignInStarter? = nil
    ) {
        self.signInStarter = signInStarter
        self.account = account
        self.environment = environment
        self.metrics = metrics
        self.store = store
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.now = now
        self.uptime = uptime
    }

    /// The cache of each discovered route of `configuration` that has one, by prefix; the data plane answers a
    /// route without one itself (``DiscoveredRouteGate``).
    func caches(for configuration: Configuration) -> [String: TokenCache] {
        var result: [String: TokenCache] = [:]
        for route in configuration.routes.routes {
            guard case .discover(let settings) = route.auth else { continue }
            result[route.prefix] = cache(for: route, settings: settings)
        }
        return result
    }

    /// The HTTP client of the token requests of a route whose `tls.caFile` (its own, else the global one) is
    /// `caFile`, made once per file.
    func provider(caFile: String?) -> IdentityProviderClient {
        state.withLock { state in
            let provider =
                state.providers[caFile ?? ""]
                ?? IdentityProviderClient(eventLoopGroup: eventLoopGroup, logger: logger, caFile: caFile)
            state.providers[caFile ?? ""] = provider
            return provider
        }
    }

    /// What the flow of a route whose authorization server is the account's last found, if it has run.
    /// The refreshed sign-in of `route` that this process holds because its write failed, if it holds one.
    func unsavedSignIn(of route: Route) -> UnsavedDiscoveredSignIn.Pending? {
        state.withLock { $0.signInFlows[route.prefix] }?.unsaved.current
    }

    func accountTarget(of route: Route) -> AccountRouteFlow.Target? {
        let flow = state.withLock { $0.accountFlows[route.prefix] }
        return flow?.lastTarget
    }

    /// The account's side of such routes, if the account has one.
    var accountSource: AccountSource? { account }

    private func cache(for route: Route, settings: DiscoverySettings) -> TokenCache? {
        if settings.usesAccount, let account { return accountCache(for: route, settings: settings, account: account) }
        guard let store else { return nil }
        return signInCache(for: route, settings: settings, store: store)
    }

    /// The route's cache: the one made for the same route, CA file and settings, else the one `make` makes with the
    /// route's logger. A reload that gives the route another CA file or other settings gets a cache that uses them.
    private func cache(
        for route: Route, settings: DiscoverySettings,
        make: (Logger, inout State) -> (cache: TokenCache, follow: @Sendable () -> Void, finish: @Sendable () -> Void)
    ) -> TokenCache {
        state.withLock { state in
            let name = CacheName(
                prefix: route.prefix, upstream: route.upstream.url, caFile: route.tls.caFile, settings: settings)
            if let known = state.caches[name] { return known }
            var logger = logger
            logger[metadataKey: "route"] = "\(route.prefix)"
            let (made, follow, finish) = make(logger, &state)
            state.caches[name] = made
            state.followers[name] = follow
            state.finishers[name] = finish
            return made
        }
    }

    /// The cache of a route that signs in at its own authorization server (`login ROUTE`), over a
    /// ``DiscoveredRouteFlow``.
    private func signInCache(
        for route: Route, settings: DiscoverySettings, store: DiscoveredSignInStore
    ) -> TokenCache {
        let provider = provider(caFile: route.tls.caFile)
        let eventLoopGroup = eventLoopGroup
        // A route with `"signIn": "auto"` asks `serve` to open its sign-in.
        var startSignIn: (@Sendable () async -> String)?
        if settings.startsSignIn, let starter = signInStarter { startSignIn = { await starter.request(route) } }
        // One with `"stepUp": "auto"` asks it to open its step-ups too, and waits for them.
        var stepUp: (@Sendable (StepUpRequest) async -> String?)?
        if settings.stepsUp, let starter = signInStarter { stepUp = { await starter.stepUp(route, $0) } }
        let metrics = metrics
        return cache(for: route, settings: settings) { logger, state in
            let rediscovery = RouteRediscovery(route: route.prefix, logger: logger, metrics: metrics) {
                () async throws(DiscoveryError) -> DiscoveredAuthorization in
                try await ResourceDiscovery.once(
                    for: route, settings: settings, eventLoopGroup: eventLoopGroup, logger: logger
                ) { (discovery) async throws(DiscoveryError) -> DiscoveredAuthorization in try await discovery.run() }
            }
            let flow = DiscoveredRouteFlow(
                route: route.prefix, upstream: route.upstream.url, store: store, provider: provider,
                addresses: Self.addresses(of: route, settings: settings), rediscovery: rediscovery,
                clientSecret: clientSecret(settings), logger: logger, now: now,
                closing: closing, startSignIn: startSignIn, stepUp: stepUp,
                unsavedChanged: { metrics?.discoveredSignInUnsaved($0) })
            state.signInFlows[route.prefix] = flow
            // The flow hears which token an upstream refused: only that one sends it to the authorization server.
            let served = flow.served
            // What the upstream last answered, for `status`.
            let record = StepUpRecord(
                route: route.prefix, upstream: route.upstream.url, store: store, writes: answers, logger: logger)
            // "Nothing stored" is read from the state directory, not asked of anyone: not throttled, so a
            // `login ROUTE` made while this proxy runs is used by the next request.
            let cache = TokenCache(
                flow: flow, now: now, uptime: uptime,
                onChange: { change in
                    if case .rejected(let value) = change { served.reject(value) }
                    record.heard(change)
                },
                // One line per token request, as the account's (a sign-in required among them), counted under
                // the flow `discover`.
                observer: TokenEventRecorder(flow: "discover", logger: logger, metrics: metrics),
                throttlesSignInRequired: false,
                // The key of the sign-in the route uses now, for the proofs of its DPoP-bound tokens (RFC 9449 §7).
                proofKeys: DiscoveredRouteProofKeys(store: store, upstream: route.upstream.url))
            return (cache, { flow.follow(cache) }, { flow.finish() })
        }
    }

    /// The cache of a route whose authorization server is the account's own: over an ``AccountRouteFlow``, which takes
    /// its tokens from the account's cache.
    private func accountCache(for route: Route, settings: DiscoverySettings, account: AccountSource) -> TokenCache {
        let eventLoopGroup = eventLoopGroup
        return cache(for: route, settings: settings) { logger, state in
            let flow = AccountRouteFlow(
                route: route.prefix, accountTokens: account.tokens, accountIssuers: account.issuers, logger: logger,
                now: now
            ) { () async throws(DiscoveryError) -> ProtectedResourceFinding in
                try await ResourceDiscovery.once(
                    for: route, settings: settings, eventLoopGroup: eventLoopGroup, logger: logger
                ) { (discovery) async throws(DiscoveryError) -> ProtectedResourceFinding in
                    try await discovery.protectedResource()
                }
            }
            state.accountFlows[route.prefix] = flow
            let cache = TokenCache(
                flow: flow, now: now, uptime: uptime,
                onChange: { change in
                    if case .rejected(let value) = change { flow.rejected(value) }
                },
                observer: TokenEventRecorder(flow: "discover", logger: logger, metrics: metrics))
            return (cache, { flow.follow(cache) }, {})
        }
    }

    /// The route's SSRF rule, with the system resolver: what its token and revocation requests are pinned by.
    static func addresses(of route: Route, settings: DiscoverySettings) -> AddressPolicy {
        AddressPolicy(upstream: route.upstream, settings: settings, resolver: SystemHostResolver())
    }

    /// The secret of the route's configured client, from its `clientSecretEnv`; nil for a public client.
    func clientSecret(_ settings: DiscoverySettings) -> String? {
        settings.clientSecretEnv.flatMap { environment[$0] }
    }

    /// Brings every route's cache in line with the sign-in it serves — the state directory's for a route that signs
    /// in at its own authorization server, the account's cache for one on the account's — so that a token a `logout`,
    /// a `login` or another process replaced is not sent again. Local reads only; a running `serve` calls it once a
    /// second (``TokenMaintenance``).
    func followStoredSignIns() {
        let followers = state.withLock { Array($0.followers.values) }
        for follow in followers { follow() }
    }

    /// Waits until what the upstreams answered so far is in the files (before `status` reads them).
    func flushAnswers() {
        answers.sync {}
    }

    /// Ends every wait for a sign-in in progress, at the start of a shutdown: the requests behind them are
    /// answered now, and the drain does not wait for them.
    func stopWaiting() {
        closing.give()
    }

    /// Closes the HTTP clients that were made; once.
    package func shutdown() async {
        stopWaiting()
        flushAnswers()
        let finishers = state.withLock { Array($0.finishers.values) }
        for finish in finishers { finish() }
        let providers = state.withLock { state in
            defer { state.providers = [:] }
            return Array(state.providers.values)
        }
        for provider in providers { try? await provider.shutdown() }
    }
}
