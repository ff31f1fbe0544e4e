extension FakeIdentityProvider {
    /// How a user signs in through native authentication (`User.signInMethod`): which `challenge_type` the client
    /// must offer at `/initiate` and `/challenge` for the fake not to answer `redirect`.
    enum SignInMethod: String, Sendable, Hashable, CaseIterable {
        /// Email and password: needs `password` among the challenge types.
        case password
        /// Email one-time passcode (8 digits, "emailed"): needs `oob` among the challenge types.
        case emailOneTimePasscode

        /// The `challenge_type` value this method needs (`password` or `oob`).
        var challengeType: String {
            switch self {
            case .password: return "password"
            case .emailOneTimePasscode: return "oob"
            }
        }
    }
}
