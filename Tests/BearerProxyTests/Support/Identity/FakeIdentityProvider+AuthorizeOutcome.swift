extension FakeIdentityProvider {
    /// What the authorization endpoint does with a valid request (`setAuthorizeOutcome(_:)`): the browser
    /// session's result. Requests with bad parameters are answered before the outcome applies.
    enum AuthorizeOutcome: Sendable, Equatable {
        /// The browser user (`setBrowserUser(_:)`, default Alice) signs in: `302 Location:
        /// <redirect_uri>?code=CODE&state=STATE`.
        case signIn
        /// The sign-in fails: `302 Location: <redirect_uri>?error=ERROR&error_description=DESCRIPTION&state=STATE`.
        case error(error: String, description: String)
        /// A code is issued, but the redirect carries a different `state` (`<state>-tampered`, or `tampered` when
        /// the request had none): a forged or mixed-up callback the client must reject.
        case wrongState
        /// Never answer (a user who never finishes in the browser); the connection stays open.
        case hang
    }
}
