/// A code the fake Microsoft authorization endpoint issued, for `signInWithIdp` to redeem once.
struct FakeFirebaseAuthorizationCode: Sendable {
    /// The `state` of the authorization request (not the one of a `.wrongState` redirect).
    var state: String
    /// The request's `redirect_uri`.
    var redirectURI: String
    /// Who signed in.
    var user: FakeFirebase.MicrosoftUser
    /// The request's `scope`, split.
    var scopes: [String]
    /// Set when redeemed (successfully or not past the lookup): a second use answers `INVALID_IDP_RESPONSE`.
    var used = false
}
