import Crypto
import Foundation

/// HS256 minting and checking of `FakeFirebase`'s tokens: Firebase ID tokens with one key, the fake Microsoft
/// tokens (`oauthAccessToken`, `oauthIdToken`) with another. Base64url, JSON and splitting come from
/// `FakeIdentityJWT`.
enum FakeFirebaseJWT {
    /// The fixed HS256 key of Firebase ID tokens (test only).
    static let firebaseKey = SymmetricKey(data: Array("bearer-proxy FakeFirebase ID token HS256 key (test only)".utf8))
    static let firebaseKeyID = "fake-firebase-hs256"
    /// The fixed HS256 key of the fake Microsoft tokens (test only).
    static let microsoftKey = SymmetricKey(
        data: Array("bearer-proxy FakeFirebase Microsoft HS256 key (test only)".utf8))
    static let microsoftKeyID = "fake-firebase-microsoft-hs256"

    /// An HS256 JWT over `claims`.
    static func mint(claims: [String: Any], key: SymmetricKey, keyID: String) -> String {
        let header: [String: Any] = ["alg": "HS256", "typ": "JWT", "kid": keyID]
        let signingInput =
            FakeIdentityJWT.base64URL(FakeIdentityJWT.json(header)) + "."
            + FakeIdentityJWT.base64URL(FakeIdentityJWT.json(claims))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: key)
        return signingInput + "." + FakeIdentityJWT.base64URL(Array(mac))
    }

    /// The claims of `token` if it is an HS256 JWT signed with `key`; nil otherwise. Nothing else is checked.
    static func verifiedClaims(_ token: String, key: SymmetricKey) -> [String: Any]? {
        guard let parts = FakeIdentityJWT.split(token), parts.header?["alg"] as? String == "HS256",
            HMAC<SHA256>.isValidAuthenticationCode(parts.signature, authenticating: parts.signingInput, using: key)
        else { return nil }
        return parts.claims
    }

    /// The claims of a JWT, unverified (any `alg`, `none` included); nil if it is not a JWT with a JSON payload.
    static func unverifiedClaims(_ token: String) -> [String: Any]? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 || segments.count == 2, let payload = FakeIdentityJWT.decodeBase64URL(segments[1])
        else { return nil }
        return FakeIdentityJWT.object(payload)
    }
}
