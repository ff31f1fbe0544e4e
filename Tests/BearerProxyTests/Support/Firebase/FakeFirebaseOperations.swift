import Foundation

/// `FakeFirebase`'s endpoint logic, run under `FakeFirebaseState`'s lock on `FakeFirebaseData`: the API key
/// check and the helpers every endpoint shares (random values, Firebase ID tokens, sign-in). Each endpoint has
/// its own extension file.
struct FakeFirebaseOperations: Sendable {
    let configuration: FakeFirebase.Configuration

    /// `https://securetoken.google.com/<projectId>`: the ID tokens' `iss`.
    var issuer: String { "https://securetoken.google.com/\(self.configuration.projectID)" }

    /// `count` random characters of `A-Z a-z 0-9` (uids, session ids, codes, refresh tokens).
    static func randomString(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<count).map { _ in alphabet.randomElement()! })
    }

    /// Seconds since 1970.
    static func seconds(_ date: Date) -> Int {
        Int(date.timeIntervalSince1970)
    }

    // MARK: - API key

    /// The answer to a call without the right API key, or nil when the key is fine: none → 403
    /// `PERMISSION_DENIED`; another than the project's (any non-empty one passes in emulator mode) → 400
    /// `API_KEY_INVALID`.
    func checkAPIKey(_ key: String?, emulatorMode: Bool, endpoint: FakeFirebase.Endpoint) -> FakeFirebaseError? {
        guard let key, !key.isEmpty else { return .missingAPIKey }
        if emulatorMode || key == self.configuration.apiKey { return nil }
        let service = endpoint == .secureToken ? "securetoken.googleapis.com" : "identitytoolkit.googleapis.com"
        return .invalidAPIKey(service: service)
    }

    // MARK: - Firebase ID tokens

    /// A Firebase ID token for `account`: HS256 (`FakeFirebaseJWT.firebaseKey`), `iss`, `aud` = project id,
    /// `sub` = `user_id` = uid, `auth_time`, `iat`, `exp` = now + `expiresIn`, `email`, `email_verified`, `name`,
    /// `firebase: {identities: {email: [...], "microsoft.com": [federated id]}, sign_in_provider}`.
    func idToken(
        for account: FakeFirebase.Account, signInProvider: String, authTime: Int, expiresIn: Int, now: Date
    ) -> String {
        let issuedAt = Self.seconds(now)
        var identities: [String: Any] = [:]
        if let email = account.email { identities["email"] = [email] }
        for (providerID, federatedID) in account.federatedIDs { identities[providerID] = [federatedID] }
        var claims: [String: Any] = [
            "iss": self.issuer, "aud": self.configuration.projectID, "auth_time": authTime,
            "user_id": account.localID, "sub": account.localID, "iat": issuedAt, "exp": issuedAt + expiresIn,
            "email_verified": account.emailVerified,
            "firebase": ["identities": identities, "sign_in_provider": signInProvider],
        ]
        if let email = account.email { claims["email"] = email }
        if let name = account.displayName { claims["name"] = name }
        return FakeFirebaseJWT.mint(
            claims: claims, key: FakeFirebaseJWT.firebaseKey, keyID: FakeFirebaseJWT.firebaseKeyID)
    }

    /// Signs `account` in with `signInProvider`: a new refresh token and ID token. Returns the members
    /// `idToken`, `refreshToken`, `expiresIn` (a string) and `localId`.
    func signIn(
        _ account: FakeFirebase.Account, signInProvider: String, data: inout FakeFirebaseData, now: Date
    ) -> [String: Any] {
        let authTime = Self.seconds(now)
        let refreshToken = data.issueRefreshToken(
            localID: account.localID, signInProvider: signInProvider, authTime: authTime)
        let idToken = self.idToken(
            for: account, signInProvider: signInProvider, authTime: authTime, expiresIn: data.expiresIn, now: now)
        return [
            "localId": account.localID, "idToken": idToken, "refreshToken": refreshToken,
            "expiresIn": String(data.expiresIn),
        ]
    }

    /// The uid of a valid Firebase ID token (signature, `iss`, `aud`, `exp` in the future, non-empty `sub`); nil
    /// otherwise. What a backend's Admin SDK `verifyIdToken` checks (without revocation).
    func verifiedUID(of token: String, now: Date) -> String? {
        guard let claims = FakeFirebaseJWT.verifiedClaims(token, key: FakeFirebaseJWT.firebaseKey),
            claims["iss"] as? String == self.issuer, claims["aud"] as? String == self.configuration.projectID,
            let expiry = claims["exp"] as? Int, expiry > Self.seconds(now),
            let uid = claims["sub"] as? String, !uid.isEmpty
        else { return nil }
        return uid
    }

    /// The account a Firebase ID token sent to link belongs to: `INVALID_ID_TOKEN` if it is not one of the
    /// fake's, `TOKEN_EXPIRED` past `exp`, `USER_NOT_FOUND` if deleted, `USER_DISABLED` if disabled.
    func account(ofIDToken token: String, data: FakeFirebaseData, now: Date) -> Result<
        FakeFirebase.Account, FakeFirebaseError
    > {
        guard let claims = FakeFirebaseJWT.verifiedClaims(token, key: FakeFirebaseJWT.firebaseKey),
            claims["iss"] as? String == self.issuer, claims["aud"] as? String == self.configuration.projectID,
            let uid = claims["sub"] as? String, let expiry = claims["exp"] as? Int
        else { return .failure(.bad("INVALID_ID_TOKEN")) }
        guard expiry > Self.seconds(now) else { return .failure(.bad("TOKEN_EXPIRED")) }
        guard let account = data.accounts[uid] else { return .failure(.bad("USER_NOT_FOUND")) }
        guard !account.disabled else { return .failure(.bad("USER_DISABLED")) }
        return .success(account)
    }
}

/// `accounts:signInWithPassword`.
extension FakeFirebaseOperations {
    /// The answer to signInWithPassword: 200 `{kind:"identitytoolkit#VerifyPasswordResponse", localId, email,
    /// displayName ("" when none), idToken, registered:true, refreshToken, expiresIn}`. Errors (400): no `email`
    /// → `MISSING_EMAIL`; no `password` → `MISSING_PASSWORD`; no `@` → `INVALID_EMAIL`; unknown email →
    /// `EMAIL_NOT_FOUND`; wrong password (or an account without one) → `INVALID_PASSWORD` — both
    /// `INVALID_LOGIN_CREDENTIALS` under email enumeration protection; then a disabled account → `USER_DISABLED`
    /// (checked after the password, so it reveals nothing to a wrong one).
    func signInWithPassword(_ body: [String: Any], data: inout FakeFirebaseData, now: Date) -> Result<
        [String: Any], FakeFirebaseError
    > {
        guard let email = body["email"] as? String, !email.isEmpty else { return .failure(.bad("MISSING_EMAIL")) }
        guard let password = body["password"] as? String, !password.isEmpty else {
            return .failure(.bad("MISSING_PASSWORD"))
        }
        guard email.contains("@") else { return .failure(.bad("INVALID_EMAIL")) }
        let protected = data.emailEnumerationProtection
        guard let account = data.account(email: email) else {
            return .failure(.bad(protected ? "INVALID_LOGIN_CREDENTIALS" : "EMAIL_NOT_FOUND"))
        }
        guard account.password == password else {
            return .failure(.bad(protected ? "INVALID_LOGIN_CREDENTIALS" : "INVALID_PASSWORD"))
        }
        guard !account.disabled else { return .failure(.bad("USER_DISABLED")) }
        var answer = self.signIn(account, signInProvider: "password", data: &data, now: now)
        answer["kind"] = "identitytoolkit#VerifyPasswordResponse"
        answer["email"] = account.email ?? email
        answer["displayName"] = account.displayName ?? ""
        answer["registered"] = true
        return .success(answer)
    }
}

/// `POST /securetoken.googleapis.com/v1/token`: the refresh grant, from a form or a JSON body.
extension FakeFirebaseOperations {
    /// The answer to a refresh: 200 `{access_token, expires_in ("3600"), token_type:"Bearer", refresh_token
    /// (the same one, as production), id_token (= access_token), user_id, project_id
    /// (the project number)}`. Names: `grant_type`/`refresh_token` (form or JSON) or `grantType`/`refreshToken`
    /// (JSON). Errors (400): `MISSING_GRANT_TYPE`, `INVALID_GRANT_TYPE` (not `refresh_token`),
    /// `MISSING_REFRESH_TOKEN`, `INVALID_REFRESH_TOKEN` (not issued), `USER_NOT_FOUND` (account deleted),
    /// `TOKEN_EXPIRED` (revoked or expired), `USER_DISABLED`.
    func secureToken(_ body: [String: Any], data: inout FakeFirebaseData, now: Date) -> Result<
        [String: Any], FakeFirebaseError
    > {
        let grantType = body["grant_type"] as? String ?? body["grantType"] as? String ?? ""
        let raw = body["refresh_token"] as? String ?? body["refreshToken"] as? String ?? ""
        guard !grantType.isEmpty else { return .failure(.bad("MISSING_GRANT_TYPE")) }
        guard grantType == "refresh_token" else { return .failure(.bad("INVALID_GRANT_TYPE")) }
        guard !raw.isEmpty else { return .failure(.bad("MISSING_REFRESH_TOKEN")) }
        guard let token = data.refreshTokens[raw] else { return .failure(.bad("INVALID_REFRESH_TOKEN")) }
        guard let account = data.accounts[token.localID] else { return .failure(.bad("USER_NOT_FOUND")) }
        guard !token.revoked else { return .failure(.bad("TOKEN_EXPIRED")) }
        guard !account.disabled else { return .failure(.bad("USER_DISABLED")) }
        let refreshToken = raw  // production answers a refresh with the same refresh token
        let idToken = self.idToken(
            for: account, signInProvider: token.signInProvider, authTime: token.authTime, expiresIn: data.expiresIn,
            now: now)
        return .success([
            "access_token": idToken, "expires_in": String(data.expiresIn), "token_type": "Bearer",
            "refresh_token": refreshToken, "id_token": idToken, "user_id": account.localID,
            "project_id": self.configuration.projectNumber,
        ])
    }
}
