import Foundation

/// The fake Microsoft side of a sign-in: the identity a redeemed code establishes, with a Graph access token,
/// a Microsoft ID token and Graph-`/me`-shaped `rawUserInfo`.
extension FakeFirebaseOperations {
    /// Scopes that are not Graph permissions (left out of the Graph token's `scp`).
    static let oidcScopes: Set<String> = ["openid", "profile", "email", "offline_access"]

    /// The identity `user` signing in with `scopes` establishes for `microsoft.com`.
    ///
    /// - `oauthAccessToken`: HS256 (`FakeFirebaseJWT.microsoftKey`) with `aud` `https://graph.microsoft.com`,
    ///   `iss` `https://sts.windows.net/<tid>/`, `scp` (the Graph scopes requested, space-separated, or
    ///   `User.Read` when none), `oid`, `tid`, `appid`, `name`, `upn`, `iat`/`nbf`, `exp` = now + `oauthExpireIn`.
    /// - `oauthIdToken`: HS256 with `aud` = the Azure client id, `iss` `https://login.microsoftonline.com/<tid>/v2.0`,
    ///   `oid`, `tid`, `sub` (pairwise: not the `oid`), `preferred_username`, `name`, `email`, `iat`/`nbf`, `exp`
    ///   = now + 3600.
    func microsoftIdentity(
        _ user: FakeFirebase.MicrosoftUser, scopes: [String], oauthExpireIn: FakeFirebase.OAuthExpireIn, now: Date
    ) -> FakeFirebaseFederatedIdentity {
        let issuedAt = Self.seconds(now)
        let graphScopes = scopes.filter { !Self.oidcScopes.contains($0) }
        let access: [String: Any] = [
            "aud": "https://graph.microsoft.com", "iss": "https://sts.windows.net/\(user.tid)/", "iat": issuedAt,
            "nbf": issuedAt, "exp": issuedAt + oauthExpireIn.seconds,
            "scp": graphScopes.isEmpty ? "User.Read" : graphScopes.joined(separator: " "), "oid": user.oid,
            "tid": user.tid, "appid": self.configuration.azureClientID, "name": user.name,
            "upn": user.preferredUsername, "sub": "graph-" + user.sub, "ver": "1.0",
        ]
        var id: [String: Any] = [
            "aud": self.configuration.azureClientID, "iss": "https://login.microsoftonline.com/\(user.tid)/v2.0",
            "iat": issuedAt, "nbf": issuedAt, "exp": issuedAt + 3600, "oid": user.oid, "tid": user.tid,
            "sub": user.sub, "preferred_username": user.preferredUsername, "name": user.name, "ver": "2.0",
        ]
        if let email = user.email { id["email"] = email }
        let names = user.name.split(separator: " ", maxSplits: 1).map(String.init)
        let rawUserInfo: [String: Any] = [
            "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
            "id": user.federatedID, "displayName": user.name, "givenName": names.first ?? user.name,
            "surname": names.count > 1 ? names[1] : NSNull(), "mail": user.email ?? NSNull(),
            "userPrincipalName": user.preferredUsername, "businessPhones": [Any](),
        ]
        return FakeFirebaseFederatedIdentity(
            providerID: "microsoft.com", federatedID: user.federatedID, email: user.email,
            emailVerified: user.emailVerified, displayName: user.name,
            rawUserInfo: String(decoding: FakeIdentityJWT.json(rawUserInfo), as: UTF8.self),
            oauthAccessToken: FakeFirebaseJWT.mint(
                claims: access, key: FakeFirebaseJWT.microsoftKey, keyID: FakeFirebaseJWT.microsoftKeyID),
            oauthIdToken: FakeFirebaseJWT.mint(
                claims: id, key: FakeFirebaseJWT.microsoftKey, keyID: FakeFirebaseJWT.microsoftKeyID),
            reportsExpireIn: true)
    }

    /// signInWithIdp's injected `.errorMessage` answer: 200 with `errorMessage` and the current Microsoft user's
    /// credential, no Firebase tokens.
    func errorMessageAnswer(_ message: String, data: FakeFirebaseData, now: Date) -> [String: Any] {
        let identity = self.microsoftIdentity(
            data.microsoftUser, scopes: ["openid", "profile", "email"], oauthExpireIn: data.oauthExpireIn, now: now)
        var answer = identity.members(oauthExpireIn: data.oauthExpireIn)
        answer["errorMessage"] = message
        return answer
    }
}
