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

/// Reads who signed in from an id token's claims (OpenID Connect Core §2) — for display only, so the token is
/// not verified: it came straight from the token endpoint over TLS.
enum IDToken {
    package static func identity(from idToken: String) -> AccountIdentity? {
        guard let claims = claims(of: idToken) else { return nil }
        return AccountIdentity(
            name: claims["name"] as? String,
            username: (claims["preferred_username"] as? String) ?? (claims["email"] as? String),
            objectID: (claims["oid"] as? String) ?? (claims["sub"] as? String),
            tenantID: claims["tid"] as? String)
    }

    /// A string claim of the token, or nil.
    static func claim(_ name: String, in idToken: String) -> String? {
        claims(of: idToken)?[name] as? String
    }

    private static func claims(of idToken: String) -> [String: Any]? {
        let segments = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count >= 2, let payload = Base64URL.decode(segments[1]) else { return nil }
        return JSONObject.dictionary(payload)
    }
}
