/// A refresh token the fake issued, known to tests by its label (`id`); the raw value is the key it is stored under.
struct FakeIdentityRefreshToken: Sendable {
    /// Where it stands.
    enum Status: Sendable, Equatable {
        /// Current.
        case active
        /// Rotated: a newer token was issued when it was redeemed. `remainingUses` nil: still valid without limit;
        /// otherwise how many more redemptions it allows (0: none).
        case superseded(remainingUses: Int?)
        /// Revoked by the test (`invalid_grant` 700082 / `bad_token`).
        case revoked
    }

    /// `"rt1"`, `"rt2"`, ... in issue order.
    var id: String
    /// Whose it is.
    var user: FakeIdentityProvider.User
    /// The client it was issued to.
    var clientID: String
    /// 1 for a bootstrap token, parent's + 1 for a rotated one.
    var generation: Int
    /// Where it stands.
    var status: Status
}
