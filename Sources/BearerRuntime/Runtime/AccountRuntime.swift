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

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token side of the composition root: the configured account's flow, its token cache, its session and the
/// token cache file, wired together. `serve` and the `login`/`logout`/`status`/`token` commands all use it.
public struct AccountRuntime: Sendable {
    public let configuration: Configuration
    public let flow: any SignInFlow
    public let tokens: TokenCache
    let session: AccountSession
    public let persistence: TokenPersistence?
    public let devIssuer: DevIssuer?
    /// How a person signs this account in (`native`, `device-code`, `browser`); nil for flows without a person.
    public let interactive: (any InteractiveSignIn)?
    /// Things the user should hear about from start-up (a corrupt token cache that was set aside).
    public let notices: [String]
    let provider: IdentityProviderClient?
    /// The discovered routes' own token caches: without a state directory, only those of the routes whose authorization
    /// server is the account's.
    package let discovered: DiscoveredRouteTokens
    /// The account's DPoP binding (RFC 9449) when its `tokenType` is not `bearer`: the key beside the token cache.
    package let dpop: DPoPBinding?
    /// The on-behalf-of routes' tokens, per caller: exchanged through this account's client, in memory only.
    package let onBehalfOf: OnBehalfOfTokens

    /// Builds the runtime for `configuration`.
    ///
    /// - Parameters:
    ///   - stateDirectory: where the token cache file (and the dev issuer's key) live; nil keeps everything in
    ///     memory (`--no-persist`).
    ///   - devIssuerURL: the dev issuer's `iss`, which depends on the address the proxy listens on.
    public static func make(
        configuration: Configuration, stateDirectory: StateDirectory?, environment: [String: String],
        eventLoopGroup: any EventLoopGroup, devIssuerURL: String, logger: Logger, metrics: ProxyMetrics? = nil,
        signInTiming: SignInTiming = SignInTiming(), now injected: (@Sendable () -> Date)? = nil,
        signInStarter: DiscoveredSignInStarter? = nil
    ) throws -> AccountRuntime {
        // Durations (back-offs, the token-request interval) run on the monotonic clock: a wall clock that steps
        // must not stretch a 3 s back-off into an hour. A test that injects its wall clock drives both, as before.
        let now = injected ?? { Date() }
        let uptime = injected == nil ? TokenCache.systemUptime : nil
        // A writer killed between its write and its rename left its temporary file, holding tokens: gone at the
        // next start of any command or `serve`.
        stateDirectory?.removeAbandonedTemporaryFiles()
        let settings = configuration.account.settings
        let persistence = stateDirectory.map { directory in
            TokenPersistence(
                store: TokenStore(
                    directory: directory, accountKey: accountKey(for: settings, devIssuerURL: devIssuerURL)),
                flowName: configuration.account.flow.rawValue, logger: logger, metrics: metrics,
                uptime: uptime ?? { .seconds(now().timeIntervalSince1970) })
        }
        let loaded = persistence?.load() ?? TokenPersistence.Loaded(tokens: [], stored: .noFile)
        var snapshot = loaded.session
        // The one session of the account; the flows that need it get it here. What the flow derives below (a fixed
        // identity, a refresh token from the environment) is put in place afterwards, without being written.
        var saveSession: (@Sendable (AccountSession) -> Void)?
        var saveTokens: (@Sendable (TokenCacheChange) -> Void)?
        if let persistence {
            saveSession = { persistence.saveSession(of: $0) }
            saveTokens = { persistence.save($0) }
        }
        let session = AccountSession(snapshot, onChange: saveSession)
        // The flows that redeem the account's refresh token share it with the other processes using the file.
        let sharing = persistence.map { persistence in
            SharedRefreshToken(
                persistence: persistence, lock: RedemptionLock(store: persistence.store), session: session,
                logger: logger, now: now)
        }
        // The DPoP key lives beside the token cache, under its name; without one, in memory.
        let dpop = settings.tokenType.flatMap { tokenType -> DPoPBinding? in
            guard tokenType != .bearer else { return nil }
            let keyFile =
                persistence.map { DPoPKeyFile(directory: $0.store.directory, fileName: $0.store.fileName) }
                ?? DPoPKeyFile()
            return DPoPBinding(preference: tokenType, keyFile: keyFile, now: now)
        }
        var provider: IdentityProviderClient?
        /// The account's one client for its identity provider (`shutdown` closes it).
        func providerClient() -> IdentityProviderClient {
            let client = IdentityProviderClient(
                eventLoopGroup: eventLoopGroup, logger: logger, caFile: configuration.tls.caFile)
            provider = client
            return client
        }
        /// Access tokens from the account's refresh token: every flow that has one gets them this way.
        func refreshTokenGrant(_ client: OAuthClient, _ providerClient: IdentityProviderClient) -> RefreshTokenGrant {
            RefreshTokenGrant(
                name: settings.flow.rawValue, client: client, provider: providerClient, session: session,
                sharing: sharing, dpop: dpop, now: now)
        }
        var devIssuer: DevIssuer?
        var interactive: (any InteractiveSignIn)?
        let flow: any SignInFlow
        switch settings {
        case .dev:
            let issuer = DevIssuer(
                issuer: devIssuerURL, key: try DevIssuer.signingKey(in: stateDirectory), dpop: dpop, now: now)
            devIssuer = issuer
            snapshot.identity = AccountIdentity(
                name: DevIdentity.displayName, username: DevIdentity.userName, objectID: issuer.identity.objectID,
                tenantID: DevIdentity.tenantID)
            flow = issuer
        case .clientCredentials(let account):
            snapshot.identity = AccountIdentity(name: "application", username: account.client.clientId)
            flow = try ClientCredentialsFlow(
                account: account, environment: environment, provider: providerClient(), dpop: dpop, now: now)
        case .managedIdentity(let account):
            snapshot.identity = account.statusIdentity
            flow = try ManagedIdentityFlow(
                account: account, environment: environment, provider: providerClient(), now: now)
        case .refreshToken(let account):
            // A refresh token in the cache file is newer than the one in the environment (it rotates on use).
            if snapshot.refreshToken == nil { snapshot.refreshToken = environment[account.refreshTokenEnv] }
            flow = refreshTokenGrant(account.client, providerClient())
        case .command(let account):
            snapshot.identity = AccountIdentity(name: "command", username: account.argv.first)
            flow = CommandFlow(account: account, now: now)
        case .staticToken(let account):
            snapshot.identity = AccountIdentity(name: "static token", username: account.tokenEnv)
            flow = try StaticTokenFlow(account: account, environment: environment)
        case .native(let account):
            let client = providerClient()
            interactive = NativeSignIn(account: account, provider: client, environment: environment)
            flow = refreshTokenGrant(account.client, client)
        case .deviceCode(let oauthClient):
            let client = providerClient()
            interactive = DeviceCodeSignIn(
                client: oauthClient, provider: client, sleep: signInTiming.sleep,
                uptime: uptime ?? { .seconds(now().timeIntervalSince1970) }, dpop: dpop)
            flow = refreshTokenGrant(oauthClient, client)
        case .browser(let account):
            let client = providerClient()
            interactive = BrowserSignIn(
                account: account, provider: client, eventLoopGroup: eventLoopGroup,
                timeout: signInTiming.browserTimeout, dpop: dpop)
            flow = refreshTokenGrant(account.client, client)
        case .firebase(let account):
            let firebase = FirebaseClient(
                provider: providerClient(),
                endpoints: FirebaseEndpoints(emulator: account.emulatorHost, base: account.apiBaseURL),
                apiKey: environment[account.apiKeyEnv] ?? "")
            interactive = FirebaseSignIn(
                account: account, client: firebase, environment: environment, eventLoopGroup: eventLoopGroup,
                timeout: signInTiming.browserTimeout, now: now)
            flow = FirebaseTokens(client: firebase, session: session, now: now)
        }
        // The file holds the account only if nothing above replaced its refresh token; a refresh token from the
        // environment, or a flow's own identity, was never written and is not lost when there is no file.
        let inFile = snapshot.refreshToken != nil && snapshot == loaded.session
        session.restore(snapshot, generation: loaded.generation, durability: inFile ? .saved : .configured)
        let tokens = TokenCache(
            flow: flow, now: now, uptime: uptime, onChange: saveTokens,
            observer: TokenEventRecorder(flow: configuration.account.flow.rawValue, logger: logger, metrics: metrics),
            proofKeys: dpop?.keyFile)
        tokens.replaceTokens(with: loaded.tokens, because: .restored)
        // A route whose authorization server is the account's own takes its tokens from this cache (SPEC §6.3).
        let accountSource = settings.oauthClient.map { client in
            DiscoveredRouteTokens.AccountSource(
                tokens: tokens, issuers: { client.endpoint.issuers(tenantID: session.identity?.tenantID) },
                clientID: client.clientId)
        }
        // Without a state directory (--no-persist) only the routes whose authorization server is the account's have
        // a cache: they store nothing of their own.
        let discovered = DiscoveredRouteTokens(
            store: stateDirectory.map(DiscoveredSignInStore.init(directory:)), eventLoopGroup: eventLoopGroup,
            environment: environment, logger: logger, metrics: metrics, now: now, uptime: uptime,
            account: accountSource, signInStarter: signInStarter)
        let onBehalfOf = OnBehalfOfTokens(
            flow: flow, environment: environment, logger: logger, metrics: metrics, now: now, uptime: uptime)
        return AccountRuntime(
            configuration: configuration, flow: flow, tokens: tokens, session: session, persistence: persistence,
            devIssuer: devIssuer, interactive: interactive, notices: loaded.notice.map { [$0] } ?? [],
            provider: provider, discovered: discovered, dpop: dpop, onBehalfOf: onBehalfOf)
    }

    /// The same account with another configuration whose `account` section is unchanged (a reload that only
    /// changed routes): the signed-in session and cached tokens carry over.
    func with(configuration: Configuration) -> AccountRuntime {
        AccountRuntime(
            configuration: configuration, flow: flow, tokens: tokens, session: session, persistence: persistence,
            devIssuer: devIssuer, interactive: interactive, notices: [], provider: provider, discovered: discovered,
            dpop: dpop, onBehalfOf: onBehalfOf)
    }

    /// Which runtime this is: a reload that keeps the account makes another value of the same one
    /// (``with(configuration:)``), sharing its token cache; one that changes the account makes a new one.
    var instance: ObjectIdentifier { ObjectIdentifier(tokens) }

    /// The distinct scope sets the routes need tokens for.
    public var scopeSets: [ScopeSet] {
        var seen: Set<ScopeSet> = []
        return configuration.routes.routes.compactMap { route -> ScopeSet? in
            guard let scopes = route.auth.tokenKey, seen.insert(scopes).inserted else { return nil }
            return scopes
        }
    }

    /// Writes what is pending — one last try of a write that failed, logging an error if the sign-in is still
    /// unsaved (it is lost with this process) — and closes the identity provider client.
    public func shutdown() async {
        persistence?.finish(tokens: tokens, session: session)
        try? await provider?.shutdown()
        await discovered.shutdown()
    }

    /// Makes sure the sign-in is in the token cache file, for a command whose point is to write it (`login`,
    /// `logout`) or that rotated it (`token`): waits for the queued writes, tries once more what failed, and throws
    /// when the session is still unsaved — the command must not report success over a sign-in that is lost when it
    /// exits.
    public func requireSaved() throws(UnsavedSignIn) {
        guard let persistence else { return }
        persistence.flush()
        persistence.saveUnsavedChanges(tokens: tokens, session: session, force: true)
        guard session.isUnsaved else { return }
        throw UnsavedSignIn(
            path: persistence.store.path, signedOut: !session.isSignedIn,
            reason: persistence.unsavedChanges(of: session)?.lastError ?? "the write did not complete")
    }

    /// The token cache file's name part for this account: what identifies it in `routes.json` — and for `dev`, the
    /// issuer URL, since its tokens carry it as `iss` (a proxy on another port must not reuse them).
    static func accountKey(for settings: AccountSettings, devIssuerURL: String) -> String {
        func endpoint(_ client: OAuthClient) -> String {
            switch client.endpoint {
            case .authority(let value), .issuer(let value): value
            }
        }
        switch settings {
        case .dev(let tokenType):
            // DPoP-bound dev tokens have a cache of their own: turning DPoP on does not leave bearer tokens in use.
            return AccountKey.make(
                flow: "dev", authority: devIssuerURL, clientId: tokenType == .bearer ? nil : "dpop", username: nil)
        case .native(let account):
            return AccountKey.make(
                flow: "native", authority: endpoint(account.client), clientId: account.client.clientId,
                username: account.username)
        case .deviceCode(let client):
            return AccountKey.make(
                flow: "device-code", authority: endpoint(client), clientId: client.clientId, username: nil)
        case .browser(let account):
            return AccountKey.make(
                flow: "browser", authority: endpoint(account.client), clientId: account.client.clientId, username: nil)
        case .clientCredentials(let account):
            return AccountKey.make(
                flow: "client-credentials", authority: endpoint(account.client), clientId: account.client.clientId,
                username: nil)
        case .managedIdentity(let account):
            // The endpoint and the identity: another identity's tokens must never be reused.
            return AccountKey.make(
                flow: "managed-identity", authority: account.endpoint, clientId: nil,
                username: account.statusIdentity.username)
        case .refreshToken(let account):
            return AccountKey.make(
                flow: "refresh-token", authority: endpoint(account.client), clientId: account.client.clientId,
                username: nil)
        case .command(let account):
            return AccountKey.make(
                flow: "command", authority: nil, clientId: nil, username: account.argv.joined(separator: " "))
        case .staticToken(let account):
            return AccountKey.make(flow: "static", authority: nil, clientId: nil, username: account.tokenEnv)
        case .firebase(let account):
            return AccountKey.make(flow: "firebase", authority: nil, clientId: account.projectId, username: nil)
        }
    }

    package init(
        configuration: Configuration, flow: any SignInFlow, tokens: TokenCache, session: AccountSession,
        persistence: TokenPersistence?, devIssuer: DevIssuer?, interactive: (any InteractiveSignIn)?, notices: [String],
        provider: IdentityProviderClient?, discovered: DiscoveredRouteTokens, dpop: DPoPBinding? = nil,
        onBehalfOf: OnBehalfOfTokens
    ) {
        self.configuration = configuration
        self.flow = flow
        self.tokens = tokens
        self.session = session
        self.persistence = persistence
        self.devIssuer = devIssuer
        self.interactive = interactive
        self.notices = notices
        self.provider = provider
        self.discovered = discovered
        self.dpop = dpop
        self.onBehalfOf = onBehalfOf
    }
}

/// `/-/ready`, `/-/status` and `status` see the account through this view.
extension AccountRuntime: AccountView {
    public var isSignedIn: Bool { session.isSignedIn }
    public var identity: AccountIdentity? { session.identity }
    public var unsavedChanges: UnsavedChanges? { persistence?.unsavedChanges(of: session) }
    public var tokenType: TokenTypePreference? { dpop?.preference }
    public var dpopThumbprint: String? { dpop?.keyFile.thumbprint() }

    public func onBehalfOfCallers(of route: Route) -> Int? {
        guard case .onBehalfOf = route.auth else { return nil }
        return onBehalfOf.subjectCounts(for: configuration)[route.prefix] ?? 0
    }
}
