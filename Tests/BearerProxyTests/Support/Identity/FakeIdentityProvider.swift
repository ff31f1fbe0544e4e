import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A fake Microsoft identity platform (v2.0) / OpenID Connect provider: a real HTTP/1.1 server on 127.0.0.1 (port
/// chosen by the OS) for the token-acquisition and sign-in tests.
///
/// Endpoints (tenant segment `contoso`; `<base>` = `baseURL`, or whatever `Host` the client used):
/// - `GET /contoso/v2.0/.well-known/openid-configuration`: issuer `<base>/contoso/v2.0`, token endpoint
///   `<base>/contoso/oauth2/v2.0/token`, `authorization_endpoint` `…/oauth2/v2.0/authorize`,
///   `device_authorization_endpoint` `…/oauth2/v2.0/devicecode`, `end_session_endpoint` `…/oauth2/v2.0/logout`
///   (not served) and JWKS.
/// - `GET /oidc/.well-known/openid-configuration`: a generic issuer `<base>/oidc`, token endpoint `<base>/oidc/token`,
///   `authorization_endpoint` `<base>/oidc/authorize`, `device_authorization_endpoint` `<base>/oidc/devicecode`,
///   `revocation_endpoint` `<base>/oidc/revoke`.
/// - `POST` either token endpoint (form-encoded): the `refresh_token` grant (one resource per request, claims,
///   `client_info`, refresh token rotation, `id_token` for `openid`) and the `client_credentials` grant (one
///   `{resource}/.default`; client secret in the body or by HTTP Basic, or a PS256/RS256 client assertion that is
///   fully verified, or an outside issuer's ES256 assertion checked against a federated credential — see
///   `FakeIdentityFederation.swift`); and the interactive grants below (`password`, `oob`, `device_code`,
///   `authorization_code`), whose tokens take the refresh grant's shape. Errors use Entra's JSON shape (see
///   `FakeIdentityError`).
/// - Native authentication (V1): `POST /contoso/oauth2/v2.0/initiate` (`client_id`, `username`, `challenge_type`
///   with `redirect`) → `{"continuation_token"}` or HTTP 200 `{"challenge_type":"redirect"}` when the user's
///   `signInMethod` is not offered; `POST …/challenge` → `password`, or `oob` with an 8-digit code "emailed"
///   (`lastOneTimeCode(for:)`; calling it again resends and invalidates the previous code); then the token
///   endpoint's `grant_type=password` / `oob`. Every answer issues a new continuation token and only the latest one
///   is accepted. Per-user knobs stop the sign-in (`setMFARequired`, `setRegistrationRequired`,
///   `setPasswordResetRequired`). Recorded in `nativeRequests`.
/// - Device authorization (RFC 8628): `POST /contoso/oauth2/v2.0/devicecode` or `/oidc/devicecode`; polls answer
///   `authorization_pending` until the test calls `approveDeviceCode(userCode:as:)` (or declines or expires it).
///   `GET /contoso/devicelogin` is a placeholder page.
/// - Authorization code + PKCE: `GET /contoso/oauth2/v2.0/authorize` or `/oidc/authorize` with a loopback
///   `redirect_uri` → `302` to it with `code` and `state` (the browser user, default Alice, signs in at once; see
///   `setAuthorizeOutcome(_:)`); redeemed at the token endpoint with the `code_verifier`.
/// - Revocation (RFC 7009): `POST /oidc/revoke` revokes a refresh token.
///
/// Tokens are HS256 JWTs signed with `FakeIdentityJWT.signingKey`; decode them with `claims(ofAccessToken:)`.
///
///     let idp = try await FakeIdentityProvider.start()
///     let refreshToken = idp.issueRefreshToken(for: .alice)
///     idp.enqueue(.throttle(retryAfter: 2))            // the next token request gets 429
///     ... run the proxy against idp.authority ...
///     #expect(idp.tokenRequestCount(forScope: "api://todo/ToDoList.Read") == 2)
///     try await idp.shutdown()
final class FakeIdentityProvider: Sendable {
    /// The default directory (tenant) id (`tid`).
    static let defaultTenantID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"

    /// What it was started with.
    let configuration: Configuration
    private let server: FakeHTTPServer
    /// The shared state (used by the provider's extension files; tests use the provider's methods).
    let state: FakeIdentityState

    /// The port it listens on (127.0.0.1).
    var port: Int { self.server.port }

    private init(configuration: Configuration, server: FakeHTTPServer, state: FakeIdentityState) {
        self.configuration = configuration
        self.server = server
        self.state = state
    }

    /// Starts a provider on 127.0.0.1:0.
    static func start(_ configuration: Configuration = .init()) async throws -> FakeIdentityProvider {
        let state = FakeIdentityState(
            configuration: configuration, timerLoop: MultiThreadedEventLoopGroup.singleton.any())
        let clients = Dictionary(configuration.clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        let verifier = FakeIdentityAssertionVerifier(
            clockSkew: configuration.assertionClockSkew, maximumLifetime: configuration.maximumAssertionLifetime)
        let server = try await FakeHTTPServer.start(
            opened: state.connectionOpened, closed: state.connectionClosed
        ) { channel, _ in
            // An accepted connection's local address is the listening one: 127.0.0.1:PORT.
            let endpoints = FakeIdentityEndpoints(
                state: state, verifier: verifier, clients: clients,
                canonicalBaseURL: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(FakeHTTPHandler(endpoints: endpoints))
        }
        return FakeIdentityProvider(configuration: configuration, server: server, state: state)
    }

    /// Stops listening, closes every connection (hanging and held ones included) and fails pending waits.
    /// Idempotent.
    func shutdown() async throws {
        await self.server.shutdown(closing: self.state.shutDown())
    }

    // MARK: - URLs

    /// `http://127.0.0.1:PORT` (no trailing slash).
    var baseURL: String { "http://127.0.0.1:\(self.port)" }
    /// The Microsoft-style authority: `<base>/contoso` (for `"authority"` configs).
    var authority: String { "\(self.baseURL)/contoso" }
    /// The Entra-style issuer: `<base>/contoso/v2.0`.
    var issuer: String { "\(self.authority)/v2.0" }
    /// `<base>/contoso/oauth2/v2.0/token` (also the `aud` client assertions must name).
    var tokenEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.entraTokenPath)" }
    /// The generic OpenID Connect issuer: `<base>/oidc` (for `"issuer"` configs).
    var oidcIssuer: String { "\(self.baseURL)/oidc" }

    // MARK: - Refresh tokens

    /// Issues a refresh token for `user` (registering the user if new), bound to `clientID` (default: the first
    /// public client of the configuration, else the first client). Use it to bootstrap a signed-in account.
    func issueRefreshToken(for user: User = .alice, clientID: String? = nil) -> String {
        let clientID =
            clientID ?? self.configuration.clients.first { !$0.isConfidential }?.id ?? self.configuration.clients.first?
            .id
            ?? Client.publicClientID
        return self.state.mutate { $0.issueRefreshToken(for: user, clientID: clientID, generation: 1).raw }
    }

    /// The label (`"rt1"`, `"rt2"`, ...) of a refresh token the fake issued; nil if it never issued it.
    func refreshTokenID(of token: String) -> String? {
        self.state.read { $0.refreshTokens[token]?.id }
    }

    /// The most recently issued refresh token of `user` that is still redeemable, if any.
    func latestRefreshToken(for user: User) -> String? {
        self.state.read { data in
            data.refreshTokenOrder.last { raw in
                guard let token = data.refreshTokens[raw], token.user == user else { return false }
                switch token.status {
                case .active, .superseded(remainingUses: nil): return true
                case .superseded(let remaining?): return remaining > 0
                case .revoked: return false
                }
            }
        }
    }

    /// Whether `token` would be accepted now (issued, not revoked, not used up after rotation).
    func isRefreshTokenValid(_ token: String) -> Bool {
        self.state.read { data in
            switch data.refreshTokens[token]?.status {
            case .active?, .superseded(remainingUses: nil)?: return true
            case .superseded(let remaining?)?: return remaining > 0
            case .revoked?, nil: return false
            }
        }
    }

    /// Revokes every refresh token of `user` (the rotated ones included).
    func revokeRefreshTokens(for user: User) {
        self.state.mutate { data in
            for (raw, token) in data.refreshTokens where token.user == user {
                data.refreshTokens[raw]?.status = .revoked
            }
        }
    }

    // MARK: - Knobs

    /// Makes the next `times` token requests (only those whose scopes include every scope in `scope`, if given)
    /// fail as `failure`. Queued failures are used in order, before any persistent one.
    func enqueue(_ failure: Failure, times: Int = 1, forScope scope: String? = nil) {
        self.state.mutate { data in
            for _ in 0..<max(0, times) {
                data.queuedFailures.append(FakeIdentityData.ScopedFailure(failure: failure, scope: scope))
            }
        }
    }

    /// Makes every token request (only those whose scopes include every scope in `scope`, if given) fail as
    /// `failure` until cleared with nil. One persistent failure at a time.
    func setPersistentFailure(_ failure: Failure?, forScope scope: String? = nil) {
        self.state.mutate { data in
            data.persistentFailure = failure.map { FakeIdentityData.ScopedFailure(failure: $0, scope: scope) }
        }
    }

    /// Turns the latch on: from now, every token response (success or error) is held until
    /// `releaseTokenResponses()`. Requests are still processed and recorded on arrival.
    func holdTokenResponses() {
        self.state.mutate { $0.holding = true }
    }

    /// Turns the latch off and sends every held response, in arrival order.
    func releaseTokenResponses() {
        self.state.release()
    }

    /// `refresh_in` (seconds) in every token response from now; nil leaves it out.
    func setRefreshIn(_ seconds: Int?) {
        self.state.mutate { $0.refreshIn = seconds }
    }

    /// Whether refresh_token grants return a new refresh token (see `Configuration.rotateRefreshTokens`).
    func setRefreshTokenRotation(_ enabled: Bool) {
        self.state.mutate { $0.rotateRefreshTokens = enabled }
    }

    /// What happens to refresh tokens rotated from now on (see `SupersededRefreshTokenPolicy`).
    func setSupersededRefreshTokens(_ policy: SupersededRefreshTokenPolicy) {
        self.state.mutate { $0.supersededRefreshTokens = policy }
    }

    // MARK: - Observations

    /// Every token request so far, in arrival order.
    var tokenRequests: [RecordedTokenRequest] {
        self.state.read { $0.tokenRequests }
    }

    /// How many token requests arrived.
    var tokenRequestCount: Int {
        self.state.read { $0.tokenRequests.count }
    }

    /// How many token requests asked for every scope in `scope` (space-separated, order-insensitive; other
    /// scopes, such as `openid profile offline_access`, may be there too).
    func tokenRequestCount(forScope scope: String) -> Int {
        self.state.read { data in data.tokenRequests.count { FakeIdentityScopes.matches(filter: scope, $0.scopes) } }
    }

    /// How many `refresh_token` grants asked for every scope in `scope` — redemptions, whatever their outcome.
    func refreshRedemptionCount(forScope scope: String) -> Int {
        self.tokenRequests.count {
            $0.grantType == "refresh_token" && FakeIdentityScopes.matches(filter: scope, $0.scopes)
        }
    }

    /// How many `refresh_token` grants were refused with `invalid_grant` (a retired, revoked or unknown token).
    var refusedRedemptionCount: Int {
        self.tokenRequests.count { request in
            guard request.grantType == "refresh_token", case .rejected(let error, _, _) = request.outcome else {
                return false
            }
            return error == "invalid_grant"
        }
    }

    /// The last client assertion received (decoded, whether it passed or not).
    var lastAssertion: DecodedAssertion? {
        self.state.read { $0.lastAssertion }
    }

    /// How many discovery documents were requested (both issuers).
    var discoveryRequestCount: Int {
        self.state.read { $0.discoveryRequests.count }
    }

    /// The users known (configured, registered, plus those refresh tokens were issued for).
    var users: [User] {
        self.state.read { $0.users }
    }

    /// Waits until the latch holds at least `n` token responses.
    func waitForHeldTokenResponses(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .heldResponses(n), timeout: timeout)
    }

    // MARK: - Decoding tokens

    /// The claims of a token the fake issued (access or ID token); nil if it is not a JWT. Not verified: use
    /// `isFakeSigned(_:)` for that.
    static func claims(ofAccessToken token: String) -> [String: Any]? {
        FakeIdentityJWT.split(token)?.claims
    }

    /// The claims of an ID token the fake issued (same as `claims(ofAccessToken:)`).
    static func claims(ofIDToken token: String) -> [String: Any]? {
        FakeIdentityJWT.split(token)?.claims
    }

}

extension FakeIdentityProvider {
    /// What the fake knows at start: its tenant, the registered clients and users, token lifetimes and the refresh
    /// token rotation rules. Lifetimes and rotation can be changed later through the provider's knobs.
    struct Configuration: Sendable {
        /// The directory (tenant) id: the `tid` of every token and the `utid` of `client_info`.
        var tenantID: String = FakeIdentityProvider.defaultTenantID
        /// The registered applications. Default: `Client.publicClient` and `Client.confidentialClient` (secret
        /// `Client.confidentialClientSecret` plus the fixture certificate `CertificateFixtures.client`).
        var clients: [Client] = [.publicClient, .confidentialClient]
        /// The users known up front (`issueRefreshToken(for:)` adds others as they are used).
        var users: [User] = [.alice, .bob]
        /// `expires_in` of every access token (seconds) unless a per-scope value is set.
        var expiresIn: Int = 3599
        /// `refresh_in` (seconds) to include in token responses; nil: the field is left out.
        var refreshIn: Int?
        /// Whether a successful refresh_token grant returns a new refresh token. When off, the response carries
        /// no `refresh_token` at all (the client keeps the one it has).
        var rotateRefreshTokens = true
        /// What happens to a refresh token once a newer one has been issued in its place.
        var supersededRefreshTokens: SupersededRefreshTokenPolicy = .remainValid
        /// How far in the future a client assertion's `nbf`/`iat` may be (clock skew), in seconds.
        var assertionClockSkew = 300
        /// How far in the future a client assertion's `exp` may be, in seconds.
        var maximumAssertionLifetime = 3600
    }

    /// What happens to a refresh token after it has been rotated (a newer one was issued when it was redeemed).
    enum SupersededRefreshTokenPolicy: Sendable, Equatable {
        /// It stays valid (what Microsoft Entra does).
        case remainValid
        /// It may be redeemed this many more times, then it is rejected (`invalid_grant` 70000).
        case graceUses(Int)
        /// It is rejected at once (`invalid_grant` 70000), as with strict rotation (OAuth 2.1 style).
        case invalid
        /// As `invalid`, and redeeming it revokes every refresh token of its user and client — the whole family
        /// (Auth0's and Okta's reuse detection; OAuth 2.0 Security BCP §4.14.2): one reuse signs every process out.
        case invalidRevokingFamily
    }
}
