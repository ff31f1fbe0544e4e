/// One revocation request (`POST /oidc/revoke`, RFC 7009) to a `FakeIdentityProvider`.
struct RecordedRevocation: Sendable, Equatable {
    /// `token_type_hint` as sent, if any.
    var tokenTypeHint: String?
    /// `client_id` as sent, if any.
    var clientID: String?
    /// The label of the refresh token revoked (`"rt1"`, ...); nil if the token was not a refresh token the fake
    /// issued (an access token, or an unknown value: RFC 7009 answers 200 all the same).
    var refreshTokenID: String?
    /// The HTTP status answered (200; 400 for a missing `token` or a refresh token of another client).
    var status: Int
}
