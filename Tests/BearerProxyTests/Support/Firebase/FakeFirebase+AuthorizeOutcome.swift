extension FakeFirebase {
    /// What the fake Microsoft authorization endpoint does with a valid request (`setAuthorizeOutcome(_:)`).
    enum AuthorizeOutcome: Sendable, Equatable {
        /// The Microsoft user (`setMicrosoftUser(_:)`) signs in: `302 Location: <redirect_uri>?code=CODE&state=STATE`
        /// with a single-use code.
        case signIn
        /// The sign-in fails: `302 Location: <redirect_uri>?error=ERROR&error_description=DESCRIPTION&state=STATE`.
        case error(String, description: String)
        /// A code is issued, but the redirect carries another `state` (`<state>-tampered`): a stale or forged
        /// callback the client must ignore (signInWithIdp would answer `INVALID_IDP_RESPONSE`).
        case wrongState

        /// `access_denied`: the user cancelled or declined consent.
        static let accessDenied = AuthorizeOutcome.error(
            "access_denied", description: "AADSTS65004: User declined to consent to access the app.")
    }
}
