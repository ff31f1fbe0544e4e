/// A `createAuthUri` answer `FakeFirebase` remembers: the sign-in it started, for `signInWithIdp` to match.
struct FakeFirebaseSession: Sendable {
    /// The `sessionId` answered (the request's, or a random one).
    var sessionID: String
    /// The GCIP `state` put in the `authUri`.
    var state: String
    /// The `continueUri` (Microsoft's `redirect_uri`, verbatim).
    var continueURI: String
    var providerID: String
    /// `openid profile email` plus the request's `oauthScope`.
    var scopes: [String]
    /// The request's `customParameter`.
    var customParameters: [String: String]
    /// The `authUri` answered.
    var authURI: String
    /// Set once a `signInWithIdp` succeeded with it: GCIP states are single-use.
    var consumed = false
}
