import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Authorization code + PKCE with a loopback redirect (RFC 6749 §4.1, RFC 7636, RFC 8252; protocols.md §4): open
/// the authorization URL in the browser, wait on 127.0.0.1 for the redirect, check `state`, redeem the code with
/// the verifier, check the id token's `nonce`.
package struct BrowserSignIn: InteractiveSignIn {
    package let account: BrowserAccount
    package let provider: IdentityProviderClient
    package let eventLoopGroup: any EventLoopGroup
    package let timeout: Duration
    /// The account's DPoP binding (RFC 9449), when its `tokenType` is not `bearer`: the authorization request names
    /// the key (`dpop_jkt`, §10) and the code is redeemed with a proof.
    package let dpop: DPoPBinding?

    package var needsPerson: Bool { true }

    package func signIn(
        console: any SignInConsole, scopeSets: [ScopeSet], options: SignInOptions
    ) async throws(SignInFailure) -> SignedInAccount {
        let endpoints = try await provider.signInEndpoints(for: account.client.endpoint)
        guard let authorizationEndpoint = endpoints.authorization else {
            throw SignInFailure(
                .misconfigured, "The identity provider has no authorization endpoint; use \"flow\": \"device-code\".")
        }
        let dpop = self.dpop?.ifApplies(to: endpoints)
        let dpopThumbprint: String?
        do {
            dpopThumbprint = try dpop?.key().thumbprint
        } catch {
            throw SignInFailure(error)
        }
        let proofKey = ProofKey()
        let state = ProofKey.randomToken()
        let nonce = ProofKey.randomToken()
        let listener: LoopbackRedirectListener
        do {
            listener = try await LoopbackRedirectListener.start(
                port: account.redirectPort, group: eventLoopGroup, timeout: timeout,
                page: { RedirectPage.html(for: $0, expectedState: state) })
        } catch {
            throw SignInFailure(
                .misconfigured,
                "Cannot listen on 127.0.0.1:\(account.redirectPort) for the sign-in redirect (\(error)); set "
                    + "\"redirectPort\" to a free port, or 0 for any.")
        }
        let url = authorizationURL(
            authorizationEndpoint, redirectURI: listener.redirectURI, scopeSets: scopeSets, proofKey: proofKey,
            state: state, nonce: nonce, dpopThumbprint: dpopThumbprint)
        await console.presentSignIn(url, heading: "Sign in with your browser at:")
        let callback = try await listener.callback(
            timeoutMessage: "Nobody finished the sign-in in the browser within \(timeout.components.seconds / 60) min; "
                + "run: bearer-proxy login to try again.")
        guard callback.state == state else {
            throw SignInFailure(
                .rejected,
                "The browser came back with a state that this sign-in did not send (a stale tab, or a forged "
                    + "request); nothing was signed in. Run: bearer-proxy login")
        }
        if let error = callback.error { throw Self.failure(error: error, description: callback.errorDescription) }
        guard let code = callback.code, !code.isEmpty else {
            throw SignInFailure(.unavailable, "The browser came back without an authorization code.")
        }
        return try await redeem(
            code, at: endpoints.token, redirectURI: listener.redirectURI, proofKey: proofKey, nonce: nonce, dpop: dpop)
    }

    /// The authorization request (RFC 6749 §4.1.1). Its scope spans every route's scope set plus the OpenID
    /// Connect scopes, so one consent covers every API; redemption and refreshes then ask one resource at a time.
    func authorizationURL(
        _ endpoint: String, redirectURI: String, scopeSets: [ScopeSet], proofKey: ProofKey, state: String,
        nonce: String, dpopThumbprint: String? = nil
    ) -> String {
        var scopes: [String] = []
        for scope in scopeSets.flatMap(\.scopes) + RefreshTokenGrant.userScopes where !scopes.contains(scope) {
            scopes.append(scope)
        }
        var query: [(String, String)] = [
            ("client_id", account.client.clientId), ("response_type", "code"), ("redirect_uri", redirectURI),
            ("response_mode", "query"), ("scope", scopes.joined(separator: " ")), ("state", state),
            ("nonce", nonce), ("code_challenge", proofKey.challenge), ("code_challenge_method", "S256"),
        ]
        // RFC 9449 §10: the code is bound to the key, so only a redemption with a proof by that key can use it.
        if let dpopThumbprint { query.append(("dpop_jkt", dpopThumbprint)) }
        if let prompt = account.prompt { query.append(("prompt", prompt.rawValue)) }
        if let loginHint = account.loginHint { query.append(("login_hint", loginHint)) }
        if let domainHint = account.domainHint { query.append(("domain_hint", domainHint)) }
        if let claims = ClaimsRequest.merged(challenge: nil, capabilities: account.client.clientCapabilities) {
            query.append(("claims", claims))
        }
        query += account.client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let separator = endpoint.contains("?") ? "&" : "?"
        return endpoint + separator + FormEncoding.encode(query)
    }

    private func redeem(
        _ code: String, at tokenEndpoint: String, redirectURI: String, proofKey: ProofKey, nonce: String,
        dpop: DPoPBinding?
    ) async throws(SignInFailure) -> SignedInAccount {
        var form: [(String, String)] = [
            ("client_id", account.client.clientId), ("grant_type", "authorization_code"), ("code", code),
            ("redirect_uri", redirectURI), ("code_verifier", proofKey.verifier),
            ("scope", RefreshTokenGrant.userScopes.joined(separator: " ")), ("client_info", "1"),
        ]
        form += account.client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let response: TokenResponse
        do {
            response = try await provider.requestToken(at: tokenEndpoint, form: form, dpop: dpop)
        } catch {
            throw SignInFailure(error.tokenError)
        }
        // OpenID Connect Core §3.1.3.7: the id token must carry the nonce of this request.
        if let idToken = response.idToken, IDToken.claim("nonce", in: idToken) != nonce {
            throw SignInFailure(
                .rejected,
                "The id token's nonce does not match this sign-in's; nothing was signed in. Run: bearer-proxy login")
        }
        return try SignedInAccount(response)
    }

    /// The provider's error in the redirect (RFC 6749 §4.1.2.1, protocols.md §4), as one line saying what to do.
    package static func failure(error: String, description: String?) -> SignInFailure {
        let detail = description.map { " (\($0.split(whereSeparator: \.isNewline).first ?? ""))" } ?? ""
        switch error {
        case "access_denied":
            return SignInFailure(
                .rejected,
                "The sign-in was cancelled or denied in the browser\(detail); run: bearer-proxy login to try again.")
        case "consent_required":
            return SignInFailure(
                .rejected,
                "The app needs consent to the routes' permissions\(detail): ask an administrator to grant it, or set "
                    + "\"prompt\": \"consent\" and run: bearer-proxy login")
        case "login_required", "interaction_required":
            return SignInFailure(
                .rejected,
                "The identity provider needs you to sign in interactively\(detail): remove \"prompt\": \"none\" and run: "
                    + "bearer-proxy login")
        case "server_error", "temporarily_unavailable":
            return SignInFailure(
                .unavailable, "The identity provider failed the sign-in (\(error))\(detail); try again later.")
        default:
            return SignInFailure(
                .misconfigured,
                "The identity provider refused the sign-in request: \(error)\(detail); check the app "
                    + "registration (redirect URI http://127.0.0.1, public client) and routes.json.")
        }
    }

    package init(
        account: BrowserAccount, provider: IdentityProviderClient, eventLoopGroup: any EventLoopGroup,
        timeout: Duration,
        dpop: DPoPBinding? = nil
    ) {
        self.account = account
        self.provider = provider
        self.eventLoopGroup = eventLoopGroup
        self.timeout = timeout
        self.dpop = dpop
    }
}
