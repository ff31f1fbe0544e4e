/// Token revocation (RFC 7009) at the generic issuer's `revocation_endpoint`.
extension FakeIdentityGrants {
    /// `POST /oidc/revoke` (`token`, `token_type_hint`, `client_id`): revokes a refresh token the fake issued (the
    /// refresh grant then answers `invalid_grant` 700082 for it) and records the request. Anything else that is
    /// not a refresh token is accepted and ignored, as RFC 7009 §2.2 asks. Nil: HTTP 200, empty body.
    func revoke(_ form: [String: String], data: inout FakeIdentityData) -> FakeIdentityError? {
        var record = RecordedRevocation(
            tokenTypeHint: form["token_type_hint"], clientID: form["client_id"], status: 200)
        defer { data.revocations.append(record) }
        guard let token = form["token"], !token.isEmpty else {
            record.status = 400
            return .missingParameter("token")
        }
        guard let refreshToken = data.refreshTokens[token] else { return nil }
        if let clientID = form["client_id"], clientID != refreshToken.clientID {
            record.status = 400
            return FakeIdentityError(
                error: "unauthorized_client", codes: [70000], message: "The token was issued to a different client.")
        }
        data.refreshTokens[token]?.status = .revoked
        record.refreshTokenID = refreshToken.id
        return nil
    }
}
