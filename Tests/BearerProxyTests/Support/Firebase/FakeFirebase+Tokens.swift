import Foundation

/// Reading and checking the tokens the fake issues: what a Firebase-protected backend and a fake Graph API need.
extension FakeFirebase {
    /// The uid of a valid Firebase ID token of this project (HS256 signature by the fake, `iss`, `aud`, `exp` in
    /// the future); nil otherwise. What a backend's `verifyIdToken` would accept.
    func verifyIDToken(_ token: String) -> String? {
        self.state.operations.verifiedUID(of: token, now: Date())
    }

    /// The `oid` of a valid fake Graph access token (signature, `aud` `https://graph.microsoft.com`, `exp` in the
    /// future); nil otherwise. For a fake Graph `/v1.0/me`.
    func verifyGraphAccessToken(_ token: String) -> String? {
        guard let claims = FakeFirebaseJWT.verifiedClaims(token, key: FakeFirebaseJWT.microsoftKey),
            claims["aud"] as? String == "https://graph.microsoft.com",
            let expiry = claims["exp"] as? Int, expiry > Int(Date().timeIntervalSince1970)
        else { return nil }
        return claims["oid"] as? String
    }

    /// The claims of a Firebase ID token (unverified; any JWT, `alg:none` emulator tokens included).
    static func claims(ofIDToken token: String) -> [String: Any]? {
        FakeFirebaseJWT.unverifiedClaims(token)
    }

    /// The claims of a fake Microsoft token (`oauthAccessToken`, `oauthIdToken`), unverified.
    static func claims(ofMicrosoftToken token: String) -> [String: Any]? {
        FakeFirebaseJWT.unverifiedClaims(token)
    }
}
