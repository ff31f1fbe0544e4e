import Foundation

/// `POST /securetoken.googleapis.com/v1/token`: the refresh grant, from a form or a JSON body.
extension FakeFirebaseOperations {
    /// The answer to a refresh: 200 `{access_token, expires_in ("3600"), token_type:"Bearer", refresh_token
    /// (the same, or a new one with `rotateRefreshTokens`), id_token (= access_token), user_id, project_id
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
        let refreshToken =
            data.rotateRefreshTokens
            ? data.issueRefreshToken(
                localID: account.localID, signInProvider: token.signInProvider, authTime: token.authTime)
            : raw
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
