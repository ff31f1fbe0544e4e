import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Discovery for one route (SPEC §6.3): from the upstream's 401 to a ``DiscoveredAuthorization``, every rule checked on
/// the way. Signs nobody in and sends no credential.
///
///  1. Probe the upstream without a token; read every `Bearer` challenge (RFC 6750 §3, RFC 9110 §11.6.1).
///  2. Protected-resource metadata: the challenge's `resource_metadata`, else the path-form then the root-form
///     well-known URL (RFC 9728 §3.1, §5.1). Its `resource` must be the upstream (§3.3) and it must name an
///     authorization server.
///  3. Authorization-server metadata from the URLs built from the issuer (``WellKnownURL``), whose `issuer`
///     must equal the one they were built from byte for byte (RFC 8414 §3.3), with PKCE S256.
///  4. Every OAuth URL https (http on loopback) and, for a remote upstream, reaching global addresses only: each
///     request connects to the addresses its URL resolved to when it was judged (``PinnedURL``), never to a
///     second resolution.
package struct ResourceDiscovery: Sendable {
    package let upstream: Upstream
    package let settings: DiscoverySettings
    let transport: any DiscoveryTransport
    package let addresses: AddressPolicy
    package let logger: Logger

    package init(
        route upstream: Upstream, settings: DiscoverySettings, transport: any DiscoveryTransport,
        resolver: any HostResolver, logger: Logger
    ) {
        self.init(
            route: upstream, settings: settings, transport: transport,
            addresses: AddressPolicy(upstream: upstream, settings: settings, resolver: resolver), logger: logger)
    }

    /// - Parameter addresses: the route's SSRF rule, made for `upstream` and `settings`.
    package init(
        route upstream: Upstream, settings: DiscoverySettings, transport: any DiscoveryTransport,
        addresses: AddressPolicy, logger: Logger
    ) {
        self.upstream = upstream
        self.settings = settings
        self.transport = transport
        self.addresses = addresses
        self.logger = logger
    }

    /// Steps 1 and 2 alone: the upstream's protected-resource metadata, its `resource` checked against the upstream,
    /// and the initial scopes — all a route whose authorization server is the account's own needs.
    package func protectedResource() async throws(DiscoveryError) -> ProtectedResourceFinding {
        do {
            return try await findProtectedResource()
        } catch {
            throw stopped(error)
        }
    }

    package func run() async throws(DiscoveryError) -> DiscoveredAuthorization {
        do {
            return try await findAuthorization()
        } catch {
            throw stopped(error)
        }
    }

    /// One log line per step, at `info`, so an operator can follow a discovery in `serve`'s log — URLs, issuers and
    /// outcomes only: discovery handles no token, code, verifier or secret, and the values a server chose are quoted
    /// and cut short (``DiscoveryError/shown(_:)``). The route is the logger's metadata
    /// (``once(for:settings:eventLoopGroup:logger:_:)`` adds it).
    private func step(_ what: String, _ metadata: Logger.Metadata) {
        logger.info("discovery: \(what)", metadata: metadata)
    }

    /// Where a discovery ends without a result: the reason logged, once, and the error handed on.
    private func stopped(_ error: DiscoveryError) -> DiscoveryError {
        step("stopped", ["upstream": "\(upstream.url)", "reason": "\(error.explanation)"])
        return error
    }

    private func findProtectedResource() async throws(DiscoveryError) -> ProtectedResourceFinding {
        let probe = try await transport.probe(try await PinnedURL(upstream: upstream, resolver: addresses.resolver))
        let challenges = probe.status == 401 ? BearerChallenge.all(in: probe.headers) : []
        let challenge = challenges.first { $0.resourceMetadata != nil } ?? challenges.first
        step(
            "upstream answered",
            [
                "upstream": "\(upstream.url)", "status": "\(probe.status)", "challenges": "\(challenges.count)",
                "resource_metadata": "\(challenge?.resourceMetadata.map(DiscoveryError.shown) ?? "none")",
            ])

        let candidates = challenge?.resourceMetadata.map { [$0] } ?? WellKnownURL.protectedResource(for: upstream)
        let (resourceMetadata, resourceAttempts) = try await firstDocument(
            at: candidates, role: "protected-resource metadata URL")
        guard let (metadataURL, body) = resourceMetadata else { throw .noMetadata(tried: resourceAttempts) }
        let metadata = try ProtectedResourceMetadata.decode(body, url: metadataURL)
        guard ProtectedResourceMetadata.resource(metadata.resource, matches: upstream) else {
            throw .resourceMismatch(resource: metadata.resource, upstream: upstream.url)
        }
        guard let servers = metadata.authorizationServers, !servers.isEmpty else {
            throw .noAuthorizationServer(url: metadataURL)
        }
        step(
            "protected-resource metadata used",
            [
                "url": "\(DiscoveryError.shown(metadataURL))", "resource": "\(DiscoveryError.shown(metadata.resource))",
                "authorization_server": "\(DiscoveryError.shown(servers[0]))",
            ])
        let (scopes, source) = Self.initialScopes(challenge: challenge, metadata: metadata)
        return ProtectedResourceFinding(
            probeStatus: probe.status, metadataFromChallenge: challenge?.resourceMetadata != nil,
            attempts: resourceAttempts, url: metadataURL, metadata: metadata, scopes: scopes, scopeSource: source)
    }

    private func findAuthorization() async throws(DiscoveryError) -> DiscoveredAuthorization {
        let finding = try await findProtectedResource()
        let metadata = finding.metadata
        let issuerText = finding.authorizationServers[0]

        let issuer = try OAuthURL(issuerText, role: "authorization server")
        guard issuer.parts.query == nil else { throw .invalidURL(role: "authorization server", url: issuerText) }
        try await addresses.check(issuer, role: "authorization server")
        let (serverDocument, serverAttempts) = try await firstDocument(
            at: WellKnownURL.authorizationServer(issuer: issuer), role: "authorization-server metadata URL")
        guard let (serverURL, serverBody) = serverDocument else {
            throw .noAuthorizationServerMetadata(issuer: issuerText, tried: serverAttempts)
        }
        let server = try AuthorizationServerMetadata.decode(serverBody, url: serverURL)
        // RFC 8414 §3.3: byte for byte — no case folding, no trailing-slash leniency.
        guard server.issuer == issuerText else {
            throw .issuerMismatch(expected: issuerText, found: server.issuer, url: serverURL)
        }
        guard server.supportsS256 else { throw .pkceUnsupported(issuer: issuerText) }
        guard let authorization = server.authorizationEndpoint, let token = server.tokenEndpoint else {
            throw .invalidMetadata(url: serverURL, reason: "no authorization_endpoint or token_endpoint")
        }
        // RFC 9126 §5: a server that takes only pushed requests but names no endpoint for them cannot be signed in at.
        if server.requirePushedAuthorizationRequests == true, server.pushedAuthorizationRequestEndpoint == nil {
            throw .invalidMetadata(
                url: serverURL,
                reason: "require_pushed_authorization_requests is true but no pushed_authorization_request_endpoint "
                    + "is named (RFC 9126 §5)")
        }
        for (url, role) in [
            (authorization, "authorization endpoint"), (token, "token endpoint"),
            (server.registrationEndpoint, "registration endpoint"), (server.revocationEndpoint, "revocation endpoint"),
            (server.pushedAuthorizationRequestEndpoint, "pushed authorization request endpoint"),
        ] {
            guard let url else { continue }
            try await addresses.check(try OAuthURL(url, role: role), role: role)
        }
        step(
            "authorization-server metadata used",
            [
                "url": "\(DiscoveryError.shown(serverURL))", "issuer": "\(DiscoveryError.shown(issuerText))",
                "pkce": "S256",
            ])
        let registration = ClientRegistration.choose(
            settings: settings, server: server, registrationEndpoint: server.registrationEndpoint)
        step(
            "client registration chosen",
            ["issuer": "\(DiscoveryError.shown(issuerText))", "registration": "\(registration.kind)"])

        return DiscoveredAuthorization(
            probeStatus: finding.probeStatus, metadataFromChallenge: finding.metadataFromChallenge,
            resourceMetadataAttempts: finding.attempts, resource: metadata.resource, issuer: issuerText,
            serverMetadataAttempts: serverAttempts, authorizationEndpoint: authorization, tokenEndpoint: token,
            registrationEndpoint: server.registrationEndpoint, revocationEndpoint: server.revocationEndpoint,
            pushedAuthorizationRequestEndpoint: server.pushedAuthorizationRequestEndpoint,
            codeChallengeMethods: server.codeChallengeMethodsSupported ?? [],
            tokenEndpointAuthMethods: server.tokenEndpointAuthMethodsSupported,
            issParameterSupported: server.authorizationResponseIssParameterSupported == true,
            scopes: finding.scopes, scopeSource: finding.scopeSource,
            registration: registration, dpopSigningAlgorithms: server.dpopSigningAlgValuesSupported ?? [],
            dpopBoundAccessTokensRequired: metadata.dpopBoundAccessTokensRequired == true)
    }

    /// The first URL that answers 200, each checked before it is fetched; every URL tried with its outcome.
    private func firstDocument(
        at urls: [String], role: String
    ) async throws(DiscoveryError) -> (found: (url: String, body: [UInt8])?, attempts: [MetadataAttempt]) {
        var attempts: [MetadataAttempt] = []
        for text in urls {
            // Resolved and judged once; the request goes to exactly those addresses.
            let url = try await addresses.pin(try OAuthURL(text, role: role), role: role)
            let outcome: String
            let transient: Bool
            do {
                let (status, body) = try await transport.fetch(url)
                if status == 200 {
                    step("\(role) tried", ["url": "\(DiscoveryError.shown(text))", "outcome": "found"])
                    attempts.append(MetadataAttempt(url: text, outcome: "found"))
                    return ((text, body), attempts)
                }
                outcome = "HTTP \(status)"
                transient = status >= 500 || status == 429
            } catch {
                outcome = error.explanation
                transient = true
            }
            step("\(role) tried", ["url": "\(DiscoveryError.shown(text))", "outcome": "\(outcome)"])
            attempts.append(MetadataAttempt(url: text, outcome: outcome, transient: transient))
        }
        return (nil, attempts)
    }

    /// The scopes to ask for first: the challenge's `scope`, else the metadata's `scopes_supported`, else none.
    static func initialScopes(
        challenge: BearerChallenge?, metadata: ProtectedResourceMetadata
    ) -> ([String], DiscoveredAuthorization.ScopeSource) {
        if let scope = challenge?.scope {
            return (scope.split(separator: " ").map(String.init), .challenge)
        }
        if let supported = metadata.scopesSupported, !supported.isEmpty { return (supported, .metadata) }
        return ([], .none)
    }
}

/// What steps 1 and 2 of ``ResourceDiscovery`` found: the protected-resource metadata, already checked against the
/// upstream and naming at least one authorization server, and the scopes to ask for first.
package struct ProtectedResourceFinding: Sendable, Equatable {
    package var probeStatus: Int
    package var metadataFromChallenge: Bool
    package var attempts: [MetadataAttempt]
    /// The metadata URL that answered.
    package var url: String
    package var metadata: ProtectedResourceMetadata
    package var scopes: [String]
    package var scopeSource: DiscoveredAuthorization.ScopeSource

    /// The metadata's `authorization_servers`, never empty.
    var authorizationServers: [String] { metadata.authorizationServers ?? [] }
}

extension DiscoveredAuthorization {
    /// Discovery for `route` (which must be a discovered one) with its own short-lived HTTP client — the route's
    /// `tls.caFile` trusted — and the system resolver: what `bearer-proxy discover` runs.
    public static func discover(
        for route: Route, settings: DiscoverySettings, logger: Logger
    ) async throws(DiscoveryError) -> DiscoveredAuthorization {
        try await ResourceDiscovery.once(for: route, settings: settings, logger: logger) {
            (discovery) async throws(DiscoveryError) -> DiscoveredAuthorization in try await discovery.run()
        }
    }
}

extension ResourceDiscovery {
    /// Runs `body` with a discovery for `route` (the route's `tls.caFile` trusted, the system resolver): one
    /// operation, whose requests share a client per host and judged address, every one shut down before this
    /// returns (``DiscoveryClient/with(caFile:eventLoopGroup:logger:connect:_:)``).
    package static func once<T: Sendable>(
        for route: Route, settings: DiscoverySettings,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger,
        _ body: (ResourceDiscovery) async throws(DiscoveryError) -> T
    ) async throws(DiscoveryError) -> T {
        var logger = logger
        if logger[metadataKey: "route"] == nil { logger[metadataKey: "route"] = "\(route.prefix)" }
        return try await DiscoveryClient.with(
            caFile: route.tls.caFile, eventLoopGroup: eventLoopGroup, logger: logger
        ) { [logger] (transport) async throws(DiscoveryError) -> T in
            try await body(
                ResourceDiscovery(
                    route: route.upstream, settings: settings, transport: transport, resolver: SystemHostResolver(),
                    logger: logger))
        }
    }
}
