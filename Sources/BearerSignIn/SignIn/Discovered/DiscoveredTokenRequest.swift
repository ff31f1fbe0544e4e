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

/// The two token requests of a discovered route (RFC 6749 §4.1.3 and §6), each carrying the route's RFC 8707
/// `resource` — the same canonical value as the authorization request, so every token is bound to that one
/// audience and none can be replayed at another resource.
package enum DiscoveredTokenRequest {
    /// Redeems an authorization code with the PKCE verifier (RFC 7636 §4.5).
    static func authorizationCode(
        _ code: String, verifier: String, redirectURI: String, resource: String, client: DiscoveredClient
    ) -> [(String, String)] {
        [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", verifier), ("resource", resource),
        ] + client.formParameters
    }

    /// Redeems the refresh token. No `scope`: a refresh never widens what was granted (RFC 6749 §6).
    static func refresh(_ refreshToken: String, resource: String, client: DiscoveredClient) -> [(
        String, String
    )] {
        [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("resource", resource)]
            + client.formParameters
    }

    /// Revokes `refreshToken` (RFC 7009 §2.1) at the server's revocation endpoint, if it has one; a line on the
    /// outcome, never the token. A client with a secret sends it in the form (`client_secret_post`). The endpoint
    /// is judged by the route's `addresses` and pinned: one that now reaches a private address gets nothing.
    package static func revoke(
        _ refreshToken: String, at endpoint: String?, clientID: String, clientSecret: String?,
        provider: IdentityProviderClient, addresses: AddressPolicy
    ) async -> String {
        guard let endpoint else {
            // Nothing to send it to (RFC 8414 §2: no `revocation_endpoint`): say so, since the token was deleted here
            // only and the server honours it until it expires.
            return "the authorization server offers no revocation (RFC 7009): the refresh token was deleted here and "
                + "stays valid at the server until it expires"
        }
        let pinned: PinnedURL
        do {
            pinned = try await addresses.pin(endpoint, role: "revocation endpoint")
        } catch {
            return "the refresh token was not sent for revocation (\(error.explanation)); it was deleted here"
        }
        var form = [("token", refreshToken), ("token_type_hint", "refresh_token"), ("client_id", clientID)]
        if let clientSecret { form.append(("client_secret", clientSecret)) }
        guard let answer = try? await provider.postForm(to: pinned, form: form), answer.status == 200 else {
            return "the authorization server did not confirm revoking the refresh token"
        }
        return "the refresh token was revoked at the authorization server"
    }

    /// What a token response gives a discovered route, to store: the rotated refresh token replaces the old one
    /// (RFC 6749 §6; OAuth 2.1 §4.3.1), and without a new one the old one stays.
    package static func record(
        _ response: TokenResponse, into stored: inout PersistedDiscoveredSignIn, at now: Date
    ) {
        stored.accessToken = response.accessToken
        stored.expiresOn = now.addingTimeInterval(response.expiresIn)
        stored.issuedAt = now
        stored.grantedScopes = response.scope
        stored.refusal = nil
        // RFC 9449 §5: `DPoP` only when the proof's key was bound (``IdentityProviderClient`` refuses any other).
        stored.tokenType = response.boundKey == nil ? nil : "DPoP"
        if let rotated = response.refreshToken, !rotated.isEmpty { stored.refreshToken = rotated }
    }

    /// The stored access token as the token cache holds it, for `scopes` (the route's cache key).
    package static func accessToken(_ stored: PersistedDiscoveredSignIn, scopes: ScopeSet) -> AccessToken? {
        guard let value = stored.accessToken, let expiresOn = stored.expiresOn else { return nil }
        // A DPoP-bound token without the key it is bound to is useless, and is never sent as a bearer token.
        let isBound = stored.tokenType?.lowercased() == "dpop"
        guard !isBound || stored.proofKeyThumbprint != nil else { return nil }
        // A response without `scope` granted what was asked (RFC 6749 §5.1): the step-up's union starts from it.
        return AccessToken(
            value: value, scopes: scopes, grantedScopes: stored.grantedScopes ?? stored.scopes, expiresOn: expiresOn,
            issuedAt: stored.issuedAt ?? expiresOn.addingTimeInterval(-3600),
            boundKey: isBound ? stored.proofKeyThumbprint : nil)
    }
}
