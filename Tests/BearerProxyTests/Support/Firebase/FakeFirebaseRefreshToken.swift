/// A Firebase refresh token `FakeFirebase` issued.
struct FakeFirebaseRefreshToken: Sendable {
    /// The Firebase uid it refreshes.
    var localID: String
    /// `firebase.sign_in_provider` of the ID tokens it yields (`password`, `microsoft.com`).
    var signInProvider: String
    /// `auth_time` of the ID tokens it yields (the sign-in's time, seconds since 1970).
    var authTime: Int
    /// Set by `revokeRefreshTokens(for:)` / `expireRefreshToken(_:)`: redeeming answers `TOKEN_EXPIRED`.
    var revoked = false
}
