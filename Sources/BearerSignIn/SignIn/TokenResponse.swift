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

/// A successful token endpoint answer (RFC 6749 §5.1, with Microsoft's additions — protocols.md §2).
package struct TokenResponse: Sendable {
    package var accessToken: String
    package var tokenType: String
    var expiresIn: TimeInterval
    /// Microsoft's undocumented early-refresh hint; MSAL refreshes at `now + refresh_in` when it is present.
    var refreshIn: TimeInterval?
    /// The granted scopes, as the provider spells them.
    var scope: [String]?
    /// A rotated refresh token: always store it in place of the old one (RFC 6749 §6).
    package var refreshToken: String?
    var idToken: String?
    /// The thumbprint of the DPoP key the token is bound to, when it was issued as `token_type` `DPoP` (RFC 9449
    /// §5); set by ``IdentityProviderClient``, which sent the proof.
    package var boundKey: String?

    /// Parses the JSON body; nil when it is not a token response. `expires_in` may be a number or a string.
    init?(json data: Data) {
        guard let object = JSONObject.dictionary(data),
            let accessToken = object["access_token"] as? String, !accessToken.isEmpty
        else { return nil }
        self.accessToken = accessToken
        tokenType = object["token_type"] as? String ?? "Bearer"
        expiresIn = Self.seconds(object["expires_in"]) ?? 3600
        refreshIn = Self.seconds(object["refresh_in"])
        scope = (object["scope"] as? String).map { $0.split(separator: " ").map(String.init) }
        refreshToken = object["refresh_token"] as? String
        idToken = object["id_token"] as? String
    }

    /// The longest lifetime a provider's number is taken at: ten years. Longer (or `inf`) is read as this.
    static let maximumSeconds: TimeInterval = 10 * 365 * 86_400

    /// A number of seconds from a provider's JSON (`expires_in`, `refresh_in`, `interval`): a JSON number or a
    /// decimal string, finite, clamped to 0…`maximum` (``maximumSeconds`` for a duration) — so that no later date
    /// arithmetic or integer conversion of it can trap; nil when absent or not a number (`NaN`, `"soon"`).
    package static func seconds(_ value: Any?, atMost maximum: TimeInterval = maximumSeconds) -> TimeInterval? {
        let number: TimeInterval?
        switch value {
        case let text as String:
            let digits = text.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "-")
            }
            number = digits ? TimeInterval(text) : nil
        default: number = JSONObject.number(value)
        }
        guard let number, !number.isNaN else { return nil }
        return min(max(number, 0), maximum)
    }

    /// The access token for `request`, received at `now`.
    package func accessToken(for request: TokenRequest, at now: Date) -> AccessToken {
        let granted = scope.map { scopes in scopes.filter { !ScopeSet.openIDConnectScopes.contains($0) } }
        return AccessToken(
            value: accessToken, scopes: request.scopes,
            grantedScopes: granted.flatMap { $0.isEmpty ? nil : $0 },
            expiresOn: now.addingTimeInterval(expiresIn),
            refreshOn: refreshIn.map { now.addingTimeInterval(min($0, expiresIn)) }, issuedAt: now,
            boundKey: boundKey)
    }
}

extension SignedInAccount {
    /// The account in a token response, or a failure when the provider sent no refresh token (`offline_access`
    /// not granted): without one, no token for another scope set could ever be had.
    init(_ response: TokenResponse) throws(SignInFailure) {
        guard let refreshToken = response.refreshToken, !refreshToken.isEmpty else {
            throw SignInFailure(
                .misconfigured,
                "The identity provider signed you in but returned no refresh token; allow the offline_access "
                    + "permission for the app.")
        }
        // Through the designated initializer: SignedInAccount belongs to Tokens/, another target.
        self.init(refreshToken: refreshToken, identity: response.idToken.flatMap(IDToken.identity), tokens: [])
    }
}
