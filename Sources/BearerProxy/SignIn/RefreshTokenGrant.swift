import Foundation

/// The refresh-token grant (RFC 6749 §6; protocols.md §2): how one signed-in account gets an access token for any
/// scope set — the identity platform's refresh tokens are multi-resource. Shared by every flow that signs a person
/// in (`refresh-token` today; `device-code`, `browser`, `native` use the same grant after their sign-in).
struct RefreshTokenGrant: SignInFlow {
    /// The scopes MSAL adds to every user request: an id token (`openid`, `profile`) and a refresh token
    /// (`offline_access`).
    static let userScopes = ["openid", "profile", "offline_access"]

    let name: String
    let client: OAuthClient
    let provider: IdentityProviderClient
    let session: AccountSession
    let now: @Sendable () -> Date

    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        guard let refreshToken = session.refreshToken else {
            throw .signInRequired(reason: "Not signed in.")
        }
        let endpoints = try await provider.endpoints(for: client.endpoint)
        var form: [(String, String)] = [
            ("client_id", client.clientId), ("grant_type", "refresh_token"), ("refresh_token", refreshToken),
            ("scope", (request.scopes.scopes + Self.userScopes).joined(separator: " ")), ("client_info", "1"),
        ]
        if let claims = ClaimsRequest.merged(challenge: request.claims, capabilities: client.clientCapabilities) {
            form.append(("claims", claims))
        }
        form += client.extraParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let issued = now()
        let response: TokenResponse
        do {
            response = try await provider.requestToken(at: endpoints.token, form: form)
        } catch {
            throw error.tokenError
        }
        session.update(refreshToken: response.refreshToken, identity: response.idToken.flatMap(IDToken.identity))
        return response.accessToken(for: request, at: issued)
    }
}
