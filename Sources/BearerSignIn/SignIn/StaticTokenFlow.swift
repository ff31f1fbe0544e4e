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

/// `static`: a fixed token for one API (a personal access token) from an environment variable. It cannot be
/// refreshed; if it is a JWT its `exp` is honoured, otherwise it is taken to be valid until the upstream says not.
package struct StaticTokenFlow: SignInFlow {
    package let name = "static"
    private let token: String
    private let expiresOn: Date

    package init(account: StaticTokenAccount, environment: [String: String]) throws(TokenError) {
        guard let token = environment[account.tokenEnv], !token.isEmpty else {
            throw .misconfigured(reason: "environment variable \(account.tokenEnv) (the token) is not set")
        }
        self.token = token
        expiresOn = JWTExpiry.expiry(of: token) ?? Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
    }

    package func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        AccessToken(
            value: token, scopes: request.scopes, expiresOn: expiresOn, refreshOn: expiresOn,
            issuedAt: Date(timeIntervalSince1970: 0))
    }
}

/// The `exp` claim of a token that happens to be a JWT (RFC 7519 §4.1.4), else nil.
enum JWTExpiry {
    static func expiry(of token: String) -> Date? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let payload = Base64URL.decode(segments[1]),
            let claims = JSONObject.dictionary(payload),
            let exp = JSONObject.number(claims["exp"])
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
