import AsyncHTTPClient
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `bearer-proxy login ROUTE` for a discovered route (SPEC §6.3): authorization code + PKCE S256 (RFC 7636) with a
/// fresh verifier held only in memory, `state` checked, RFC 9207 `iss` checked when present and required when the
/// server advertises it, a loopback redirect (RFC 8252 §7.3), and the route's RFC 8707 `resource` in the authorization
/// request and the code exchange. The outcome is stored under (issuer, client, resource).
public struct DiscoveredSignIn: Sendable {
    /// What a finished sign-in shows: never a token, code, verifier or secret.
    public struct Outcome: Sendable {
        public var issuer: String
        public var clientKind: String
        public var clientID: String
        public var resource: String
        public var scopes: [String]
        public var expiresOn: Date?
        public var hasRefreshToken: Bool

        package init(
            issuer: String, clientKind: String, clientID: String, resource: String, scopes: [String],
            expiresOn: Date? = nil, hasRefreshToken: Bool
        ) {
            self.issuer = issuer
            self.clientKind = clientKind
            self.clientID = clientID
            self.resource = resource
            self.scopes = scopes
            self.expiresOn = expiresOn
            self.hasRefreshToken = hasRefreshToken
        }
    }

    package let route: Route
    package let settings: DiscoverySettings
    let found: DiscoveredAuthorization
    package let store: DiscoveredSignInStore
    package let provider: IdentityProviderClient
    let registrar: DiscoveryClient
    /// The route's SSRF rule: the registration and token endpoints are pinned by it for each request.
    package let addresses: AddressPolicy
    package let eventLoopGroup: any EventLoopGroup
    package let timeout: Duration
    package let now: @Sendable () -> Date
    /// Where the configured client's `clientSecretEnv` is read.
    package let environment: [String: String]
    /// Set for a sign-in `serve` opens by itself: it opens none while a decline with the server is noted, and notes
    /// its own. nil: a person's `login ROUTE`, never held back.
    package var backOff: SignInBackOff?

    public init(
        route: Route, settings: DiscoverySettings, found: DiscoveredAuthorization, store: DiscoveredSignInStore,
        provider: IdentityProviderClient, registrar: DiscoveryClient, eventLoopGroup: any EventLoopGroup,
        environment: [String: String] = [:], timeout: Duration = .seconds(300),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            route: route, settings: settings, found: found, store: store, provider: provider, registrar: registrar,
            addresses: AddressPolicy(upstream: route.upstream, settings: settings, resolver: SystemHostResolver()),
            eventLoopGroup: eventLoopGroup, environment: environment, timeout: timeout, now: now)
    }

    package init(
        route: Route, settings: DiscoverySettings, found: DiscoveredAuthorization, store: DiscoveredSignInStore,
        provider: IdentityProviderClient, registrar: DiscoveryClient, addresses: AddressPolicy,
        eventLoopGroup: any EventLoopGroup, environment: [String: String] = [:], timeout: Duration = .seconds(300),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.addresses = addresses
        self.environment = environment
        self.route = route
        self.settings = settings
        self.found = found
        self.store = store
        self.provider = provider
        self.registrar = registrar
        self.eventLoopGroup = eventLoopGroup
        self.timeout = timeout
        self.now = now
    }

    /// Signs in for `route` with HTTP clients of its own (trusting `caFile` beside the system's roots), storing
    /// the outcome in `stateDirectory`; `backOff` for one `serve` opens (``backOff``).
    public static func run(
        route: Route, settings: DiscoverySettings, found: DiscoveredAuthorization, caFile: String?,
        stateDirectory: StateDirectory, console: any SignInConsole, noBrowser: Bool, logger: Logger,
        environment: [String: String] = [:], timeout: Duration = .seconds(300)
    ) async throws(SignInFailure) -> Outcome {
        try await run(
            route: route, settings: settings, found: found, caFile: caFile, stateDirectory: stateDirectory,
            console: console, noBrowser: noBrowser, logger: logger, environment: environment, timeout: timeout,
            backOff: nil)
    }

    package static func run(
        route: Route, settings: DiscoverySettings, found: DiscoveredAuthorization, caFile: String?,
        stateDirectory: StateDirectory, console: any SignInConsole, noBrowser: Bool, logger: Logger,
        environment: [String: String], timeout: Duration, backOff: SignInBackOff?
    ) async throws(SignInFailure) -> Outcome {
        let group = MultiThreadedEventLoopGroup.singleton
        let provider = IdentityProviderClient(eventLoopGroup: group, logger: logger, caFile: caFile)
        var signIn = DiscoveredSignIn(
            route: route, settings: settings, found: found, store: DiscoveredSignInStore(directory: stateDirectory),
            provider: provider, registrar: DiscoveryClient(caFile: caFile, eventLoopGroup: group, logger: logger),
            eventLoopGroup: group, environment: environment, timeout: timeout)
        signIn.backOff = backOff
        let result: Result<Outcome, SignInFailure>
        do {
            result = .success(try await signIn.run(console: console, noBrowser: noBrowser))
        } catch {
            result = .failure(error)
        }
        try? await provider.shutdown()
        return try result.get()
    }

    /// The command that starts this sign-in again, for the messages.
    package var command: String { "bearer-proxy login \(route.prefix)" }

    /// Signs in, one interactive sign-in per authorization server on this machine at a time (SPEC §6.3): a second
    /// `login` for a route of the same server waits for the first — under a `flock` the kernel releases with its
    /// process, never a file with a timestamp — and, when the first one stored a sign-in for this route meanwhile, uses
    /// it instead of opening a second browser tab. One `serve` opens reads the server's decline there, under the lock,
    /// and opens no tab while the first one's is noted.
    /// - Parameter noBrowser: print the URL and read the redirected address from `console` instead of waiting
    ///   on the loopback listener (a browser on another machine).
    public func run(console: any SignInConsole, noBrowser: Bool) async throws(SignInFailure) -> Outcome {
        let lock = RedemptionLock(directory: store.directory, fileName: store.signInLockName(issuer: found.issuer))
        let before = storedSignIn()
        var waited = false
        return try await lock.withLock(
            maximumWait: timeout + .seconds(30),
            waiting: {
                waited = true
                console.show(
                    "Another sign-in with \(found.issuer) is in progress on this machine; waiting for it instead of "
                        + "opening a second browser tab…")
            }
        ) { (outcome: RedemptionLock.Outcome) async throws(SignInFailure) -> Outcome in
            if waited, outcome != .cancelled, let done = storedSignIn(), done != before {
                console.show("Signed in by the other sign-in.")
                return Self.outcome(of: done)
            }
            if outcome == .cancelled { throw SignInFailure(.cancelled, "Sign-in cancelled.") }
            try refuseWhileDeclined()
            return try await notingDeclines(console: console) { () async throws(SignInFailure) -> Outcome in
                // Taken inside the server's lock, and `serve` takes only this one: no two holders wait on each other.
                try await store.routeSignInLock(upstream: route.upstream.url).withLock {
                    _ async throws(SignInFailure) -> Outcome in
                    try await signInOnce(console: console, noBrowser: noBrowser)
                }
            }
        }
    }

    /// The sign-in this route uses now, if one is stored for the authorization server discovery found.
    private func storedSignIn() -> PersistedDiscoveredSignIn? {
        guard let key = try? store.routeKey(upstream: route.upstream.url), key.issuer == found.issuer,
            key.resource == found.resource
        else { return nil }
        return try? store.signIn(key)
    }

    private static func outcome(of stored: PersistedDiscoveredSignIn) -> Outcome {
        Outcome(
            issuer: stored.key.issuer, clientKind: stored.clientKind, clientID: stored.key.clientID,
            resource: stored.key.resource, scopes: stored.grantedScopes ?? stored.scopes, expiresOn: stored.expiresOn,
            hasRefreshToken: stored.refreshToken != nil)
    }

    /// Signs in once; a stored registration the server no longer knows (`invalid_client`) is dropped and the
    /// sign-in runs once more with a new one.
    private func signInOnce(console: any SignInConsole, noBrowser: Bool) async throws(SignInFailure) -> Outcome {
        do {
            return try await attempt(console: console, noBrowser: noBrowser, reuseRegistration: true)
        } catch {
            guard case .staleRegistration = error else { throw error.failure }
        }
        console.show("The authorization server no longer knows the stored client registration; registering again.")
        do {
            try store.dropRegistration(issuer: found.issuer)
        } catch {
            throw SignInFailure(.misconfigured, "\(error)")
        }
        do {
            return try await attempt(console: console, noBrowser: noBrowser, reuseRegistration: false)
        } catch {
            throw error.failure
        }
    }

    enum AttemptFailure: Error {
        case staleRegistration
        case failed(SignInFailure)

        package var failure: SignInFailure {
            switch self {
            case .staleRegistration:
                SignInFailure(
                    .misconfigured, "The authorization server refused a client it has just registered (invalid_client)."
                )
            case .failed(let failure): failure
            }
        }
    }

    private func attempt(
        console: any SignInConsole, noBrowser: Bool, reuseRegistration: Bool
    ) async throws(AttemptFailure) -> Outcome {
        if found.dpopBoundAccessTokensRequired, route.tokenType == .bearer {
            // A sign-in would only yield bearer tokens the resource refuses.
            throw .failed(
                SignInFailure(.misconfigured, DiscoveryError.dpopRequired(resource: found.resource).explanation))
        }
        let proofKey = ProofKey()  // fresh per flow, in memory only
        let state = ProofKey.randomToken()
        let listener: LoopbackRedirectListener
        do {
            let page: @Sendable (AuthorizationCallback) -> String = { RedirectPage.html(for: $0, expectedState: state) }
            // Any port: the one the stored registration was made with first, for a server that (against RFC 8252
            // §7.3) compares the loopback port too; when it is taken, another.
            if settings.redirectPort == 0, reuseRegistration, let port = registeredPort(),
                let reused = try? await LoopbackRedirectListener.start(
                    port: port, group: eventLoopGroup, timeout: timeout, page: page)
            {
                listener = reused
            } else {
                listener = try await LoopbackRedirectListener.start(
                    port: settings.redirectPort, group: eventLoopGroup, timeout: timeout, page: page)
            }
        } catch {
            throw .failed(
                SignInFailure(
                    .misconfigured,
                    "Cannot listen on 127.0.0.1:\(settings.redirectPort) for the sign-in redirect (\(error)); set "
                        + "\"discovery\": {\"redirectPort\": …} on the route to a free port, or 0 for any."))
        }
        let client: DiscoveredClient
        let storedRegistration: Bool
        do {
            (client, storedRegistration) = try await clientIdentity(
                redirectPort: listener.port, reuse: reuseRegistration)
        } catch {
            await listener.close()
            throw .failed(error)
        }
        // The sign-in's DPoP key (RFC 9449), when its requests prove one: the same file every process reads, so the
        // tokens bound to it work in all of them.
        let key = DiscoveredSignInKey(issuer: found.issuer, clientID: client.id, resource: found.resource)
        let dpop = DPoPBinding(preference: route.tokenType, keyFile: store.proofKeyFile(key), now: now)
            .ifApplies(to: found)
        let proofThumbprint: String?
        do {
            proofThumbprint = try dpop?.key().thumbprint
        } catch {
            await listener.close()
            throw .failed(SignInFailure(error))
        }
        let parameters = authorizationParameters(
            client: client, redirectURI: listener.redirectURI, proofKey: proofKey, state: state,
            dpopThumbprint: proofThumbprint)
        let url: String
        do {
            url = try await browserURL(parameters, client: client, dpop: dpop)
        } catch {
            await listener.close()
            throw error
        }
        // Without a push, a server that has forgotten a stored registration shows an error page and never redirects
        // (RFC 6749 §4.1.2.1): say what to do then, rather than leave the person waiting out the limit.
        let hint =
            storedRegistration && found.pushedAuthorizationRequestEndpoint == nil
            ? "If the browser shows an error about the client instead of a sign-in, the authorization server no "
                + "longer knows this machine's registration: stop this with Ctrl-C, run: bearer-proxy logout "
                + "\(route.prefix) --forget-registration, then: \(command)"
            : nil
        let callback: AuthorizationCallback
        do {
            callback = try await awaitCallback(
                url: url, listener: listener, console: console, noBrowser: noBrowser, hint: hint)
            try check(callback, state: state)
        } catch {
            throw .failed(error)
        }
        guard let code = callback.code, !code.isEmpty else {
            throw .failed(SignInFailure(.unavailable, "The browser came back without an authorization code."))
        }
        let issued = now()
        let tokenEndpoint: PinnedURL
        do {
            // Judged again now, and the code goes to exactly the addresses judged.
            tokenEndpoint = try await addresses.pin(found.tokenEndpoint, role: "token endpoint")
        } catch {
            throw .failed(SignInFailure(error.isTransient ? .unavailable : .misconfigured, error.explanation))
        }
        let response: TokenResponse
        do {
            response = try await provider.requestToken(
                at: tokenEndpoint,
                form: DiscoveredTokenRequest.authorizationCode(
                    code, verifier: proofKey.verifier, redirectURI: listener.redirectURI, resource: found.resource,
                    client: client),
                basicCredentials: client.basicCredentials, dpop: dpop)
        } catch .rejected(let failure) where failure.error == "invalid_client" && client.kind == .dynamic {
            throw .staleRegistration
        } catch {
            throw .failed(SignInFailure(error.tokenError))
        }
        return try save(response, client: client, proofThumbprint: proofThumbprint, at: issued)
    }

    /// The loopback port of the redirect URI the stored registration with this server was made with, if any.
    private func registeredPort() -> Int? {
        guard case .dynamic = found.registration,
            let redirectURI = (try? store.registration(issuer: found.issuer))??.redirectURI,
            let port = redirectURI.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) })
        else { return nil }
        return port
    }

    /// The client identity, in the order of SPEC §6.3: the route's `clientId`, else its Client ID Metadata Document
    /// when the server supports them, else the stored registration with this very server, else a new dynamic
    /// registration, else what to configure.
    /// - Returns: the client, and whether it is the registration stored from an earlier sign-in.
    private func clientIdentity(
        redirectPort: Int, reuse: Bool
    ) async throws(SignInFailure) -> (client: DiscoveredClient, stored: Bool) {
        let endpoint: String
        switch found.registration {
        case .configured(let clientID):
            // A confidential client's secret (RFC 6749 §2.3.1), sent as the server's metadata allows.
            let client = DiscoveredClient(
                id: clientID, secret: settings.clientSecretEnv.flatMap { environment[$0] }, kind: .configured,
                authentication: DiscoveredClient.Authentication(supported: found.tokenEndpointAuthMethods))
            return (client, false)
        case .dynamic(let registrationEndpoint):
            endpoint = registrationEndpoint
        case .metadataDocument(let url):
            // The server fetches the document itself and takes its URL as the client_id (the MCP specification's
            // Client ID Metadata Documents; draft-ietf-oauth-client-id-metadata-document): nothing to register or
            // store, a public client that proves itself with PKCE.
            return (DiscoveredClient(id: url, kind: .metadataDocument), false)
        case .unavailable:
            throw SignInFailure(.misconfigured, "No client identity: \(found.registration.explanation).")
        }
        do {
            // Only a registration made with this issuer at this endpoint: never one of another server.
            if reuse, let stored = try store.registration(issuer: found.issuer),
                stored.registrationEndpoint == endpoint
            {
                return (DiscoveredClient(id: stored.clientID, secret: stored.clientSecret, kind: .dynamic), true)
            }
        } catch {
            throw SignInFailure(.misconfigured, "\(error)")
        }
        let registered: RegisteredClient
        do {
            registered = try await registrar.register(
                ClientRegistrationRequest(redirectPort: redirectPort, scopes: found.scopes),
                at: try await addresses.pin(endpoint, role: "registration endpoint"))
        } catch {
            throw SignInFailure(.misconfigured, error.explanation)
        }
        do {
            try store.saveRegistration(
                PersistedRegistration(
                    issuer: found.issuer, registrationEndpoint: endpoint, clientID: registered.clientID,
                    clientSecret: registered.clientSecret, secretExpiresAt: registered.secretExpiresAt,
                    redirectURI: "http://127.0.0.1:\(redirectPort)/"))
        } catch {
            throw SignInFailure(.misconfigured, "\(error)")
        }
        return (DiscoveredClient(id: registered.clientID, secret: registered.clientSecret, kind: .dynamic), false)
    }

    /// The authorization request's parameters (RFC 6749 §4.1.1) with PKCE (RFC 7636 §4.3), `resource`
    /// (RFC 8707 §2.1) and, for a sign-in with a DPoP key, `dpop_jkt`: the server binds the code to that key
    /// (RFC 9449 §10), so a code taken on its way back is useless to anyone without it.
    func authorizationParameters(
        client: DiscoveredClient, redirectURI: String, proofKey: ProofKey, state: String,
        dpopThumbprint: String? = nil
    ) -> [(String, String)] {
        var query: [(String, String)] = [
            ("response_type", "code"), ("client_id", client.id), ("redirect_uri", redirectURI), ("state", state),
            ("code_challenge", proofKey.challenge), ("code_challenge_method", "S256"), ("resource", found.resource),
        ]
        if !found.scopes.isEmpty { query.append(("scope", found.scopes.joined(separator: " "))) }
        if let dpopThumbprint { query.append(("dpop_jkt", dpopThumbprint)) }
        return query
    }

    /// The address the browser is sent to: where the server offers pushed authorization requests (RFC 9126), the
    /// request is pushed first and the address carries only `client_id` and `request_uri` (§4); otherwise the whole
    /// request is in the address (RFC 6749 §4.1.1). A push the server refuses with `invalid_client` for a
    /// registration of this machine's is a stale registration: registered again at once, before any browser.
    private func browserURL(
        _ parameters: [(String, String)], client: DiscoveredClient, dpop: DPoPBinding?
    ) async throws(AttemptFailure) -> String {
        let endpoint = found.authorizationEndpoint
        guard let pushEndpoint = found.pushedAuthorizationRequestEndpoint else {
            return endpoint + (endpoint.contains("?") ? "&" : "?") + FormEncoding.encode(parameters)
        }
        let pinned: PinnedURL
        do {
            // Judged now, as every endpoint is before it is sent anything; the push goes to exactly those addresses.
            pinned = try await addresses.pin(pushEndpoint, role: "pushed authorization request endpoint")
        } catch {
            throw .failed(SignInFailure(error.isTransient ? .unavailable : .misconfigured, error.explanation))
        }
        let requestURI: String
        do {
            requestURI = try await PushedAuthorizationRequest.push(
                parameters, to: pinned, client: client, provider: provider, dpop: dpop)
        } catch .rejected(let failure) where failure.error == "invalid_client" && client.kind == .dynamic {
            throw .staleRegistration
        } catch {
            switch error {
            case .rejected(let failure):
                throw .failed(PushedAuthorizationRequest.refused(failure, endpoint: pushEndpoint))
            case .failed(let failure): throw .failed(failure)
            }
        }
        return PushedAuthorizationRequest.authorizationURL(
            endpoint: endpoint, clientID: client.id, requestURI: requestURI)
    }

    /// - Parameter hint: a line shown with the waiting one: what to do if the browser shows an error page.
    private func awaitCallback(
        url: String, listener: LoopbackRedirectListener, console: any SignInConsole, noBrowser: Bool, hint: String?
    ) async throws(SignInFailure) -> AuthorizationCallback {
        guard noBrowser else {
            await console.presentSignIn(url, heading: "Sign in for \(route.prefix) at \(found.issuer):")
            if let hint { console.show(hint) }
            return try await listener.callback(
                timeoutMessage: "Nobody finished the sign-in in the browser within "
                    + "\(timeout.components.seconds / 60) min; run: \(command) to try again.")
        }
        console.show("Sign in for \(route.prefix) at \(found.issuer): open this address in any browser:")
        console.show("")
        console.show("  " + url)
        console.show("")
        if let hint { console.show(hint) }
        let pasted: String
        do {
            pasted = try await console.ask(
                "Then paste the address the browser was sent to (\(listener.redirectURI)?…):", hidden: false)
        } catch {
            await listener.close()
            throw error
        }
        await listener.close()
        return AuthorizationCallback(target: pasted.trimmingWhitespace())
    }

    /// `state` first (RFC 6749 §10.12), then the issuer (RFC 9207 §2.4: a response from another server is a
    /// mix-up attack), then the server's own error.
    private func check(_ callback: AuthorizationCallback, state: String) throws(SignInFailure) {
        guard callback.state == state else {
            throw SignInFailure(
                .rejected,
                "The browser came back with a state that this sign-in did not send (a stale tab, or a forged "
                    + "request); nothing was signed in. Run: \(command)")
        }
        if let iss = callback.parameters["iss"] {
            guard iss == found.issuer else {
                throw SignInFailure(
                    .rejected,
                    "The authorization response names another issuer (\(DiscoveryError.shown(iss))) than the one "
                        + "this sign-in was sent to (\(found.issuer)): a possible mix-up attack (RFC 9207); nothing "
                        + "was signed in.")
            }
        } else if found.issParameterSupported {
            throw SignInFailure(
                .rejected,
                "The authorization response carries no iss although \(found.issuer) says it sends one (RFC 9207); "
                    + "nothing was signed in.")
        }
        if let error = callback.error {
            let detail = callback.errorDescription.map { " (\(DiscoveryError.shown($0)))" } ?? ""
            if error == "access_denied" {
                throw SignInFailure(
                    .rejected,
                    "The sign-in was cancelled or denied in the browser\(detail); run: \(command) to try again.")
            }
            throw SignInFailure(
                .misconfigured,
                "The authorization server refused the sign-in: \(DiscoveryError.shown(error))\(detail).")
        }
    }

    /// - Parameter proofThumbprint: the `jkt` of the DPoP key the sign-in's requests proved; nil: none.
    private func save(
        _ response: TokenResponse, client: DiscoveredClient, proofThumbprint: String?, at issued: Date
    ) throws(AttemptFailure) -> Outcome {
        let key = DiscoveredSignInKey(issuer: found.issuer, clientID: client.id, resource: found.resource)
        var record = PersistedDiscoveredSignIn(
            key: key, clientKind: client.kind.rawValue, tokenEndpoint: found.tokenEndpoint,
            revocationEndpoint: found.revocationEndpoint, scopes: found.scopes)
        if client.kind == .configured, client.secret != nil {
            record.tokenEndpointAuthMethod = client.authentication.rawValue
        }
        record.keep(found)
        record.proofKeyThumbprint = proofThumbprint
        DiscoveredTokenRequest.record(response, into: &record, at: issued)
        do {
            try store.updateSignIn(key) { $0 = record }
            // A key an earlier sign-in under this key proved is no longer any token's.
            if proofThumbprint == nil { try store.proofKeyFile(key).remove() }
            // The route now uses this sign-in: one of another server, client or resource is no longer found.
            try store.setRouteKey(key, upstream: route.upstream.url)
        } catch {
            throw .failed(SignInFailure(.misconfigured, "The sign-in could not be stored: \(error)"))
        }
        return Outcome(
            issuer: found.issuer, clientKind: client.kind.rawValue, clientID: client.id, resource: found.resource,
            scopes: response.scope ?? found.scopes, expiresOn: record.expiresOn,
            hasRefreshToken: record.refreshToken != nil)
    }
}
