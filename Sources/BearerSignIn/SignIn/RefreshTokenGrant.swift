import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The refresh-token grant (RFC 6749 §6; protocols.md §2): how one signed-in account gets an access token for any
/// scope set — the identity platform's refresh tokens are multi-resource. Shared by every flow that signs a person
/// in (`refresh-token` today; `device-code`, `browser`, `native` use the same grant after their sign-in).
package struct RefreshTokenGrant: SignInFlow {
    /// The scopes MSAL adds to every user request: an id token (`openid`, `profile`) and a refresh token
    /// (`offline_access`).
    static let userScopes = ["openid", "profile", "offline_access"]

    package let name: String
    package let client: OAuthClient
    package let provider: IdentityProviderClient
    package let session: AccountSession
    /// How the refresh token is shared with other processes through the token cache file; nil with `--no-persist`.
    let sharing: SharedRefreshToken?
    /// The account's DPoP binding (RFC 9449), when its `tokenType` is not `bearer`.
    package let dpop: DPoPBinding?
    package let now: @Sendable () -> Date
    /// One redemption at a time when the refresh token is this process's alone.
    private let turns = RedemptionTurns()

    package init(
        name: String, client: OAuthClient, provider: IdentityProviderClient, session: AccountSession,
        sharing: SharedRefreshToken?, dpop: DPoPBinding? = nil, now: @escaping @Sendable () -> Date
    ) {
        self.name = name
        self.client = client
        self.provider = provider
        self.session = session
        self.sharing = sharing
        self.dpop = dpop
        self.now = now
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        // Before the redemption lock, not under it: a first discovery may take as long as the token request itself,
        // and the other processes' wait for the lock is bounded by one token request. (Not signed in here: the file
        // may still hold another process's sign-in, and discovery then happens under the lock, once.)
        let endpoints = session.refreshToken == nil ? nil : try await provider.endpoints(for: client.endpoint)
        let redeem = { (refreshToken: String) async throws(TokenError) -> Redemption in
            try await self.redeem(refreshToken, for: request, at: endpoints)
        }
        if let sharing, sharing.isShared {
            return try await sharing.accessToken(for: request, redeem: redeem)
        }
        return try await turns.inTurn { () async throws(TokenError) -> AccessToken in
            // Read in turn: the redemption before this one may have rotated it.
            guard let refreshToken = session.refreshToken else {
                throw .signInRequired(reason: "Not signed in.")
            }
            // Without a file the session is the only place a newer refresh token can be.
            let redemption = try await Redemption.redeemingLatest(
                refreshToken, latest: { session.refreshToken }, redeem: redeem)
            session.update(refreshToken: redemption.refreshToken, identity: redemption.identity)
            return redemption.accessToken
        }
    }

    /// One token request with `refreshToken`, and nothing else: what to keep is the caller's to decide.
    private func redeem(
        _ refreshToken: String, for request: TokenRequest, at known: ProviderEndpoints?
    ) async throws(TokenError) -> Redemption {
        let endpoints: ProviderEndpoints
        if let known {
            endpoints = known
        } else {
            endpoints = try await provider.endpoints(for: client.endpoint)
        }
        var form: [(String, String)] = [
            ("client_id", client.clientId), ("grant_type", "refresh_token"), ("refresh_token", refreshToken),
            ("scope", (request.scopes.scopes + Self.userScopes).joined(separator: " ")), ("client_info", "1"),
        ]
        if let claims = ClaimsRequest.merged(challenge: request.claims, capabilities: client.clientCapabilities) {
            form.append(("claims", claims))
        }
        form += client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        // A discovered route of the account's own authorization server (SPEC §6.3); the account's own wins.
        if let resource = request.resource, client.extraParameters["resource"] == nil {
            form.append(("resource", resource))
        }
        let issued = now()
        let response: TokenResponse
        do {
            response = try await provider.requestToken(
                at: endpoints.token, form: form, dpop: dpop?.ifApplies(to: endpoints))
        } catch {
            throw error.tokenError
        }
        return Redemption(
            accessToken: response.accessToken(for: request, at: issued),
            refreshToken: response.refreshToken ?? refreshToken, identity: response.idToken.flatMap(IDToken.identity))
    }
}
