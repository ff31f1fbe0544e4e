import Foundation

/// An authorization code the authorization endpoint issued, with what its redemption must match.
struct FakeIdentityAuthorizationCode: Sendable {
    /// Who signed in.
    var user: FakeIdentityProvider.User
    /// The client it was issued to.
    var clientID: String
    /// `redirect_uri` of the authorization request (the redemption must send the same, exactly).
    var redirectURI: String
    /// `code_challenge` (S256) of the authorization request.
    var codeChallenge: String
    /// `scope` of the authorization request (used when the redemption sends none).
    var scope: String
    /// `nonce` of the authorization request, put verbatim in the ID token.
    var nonce: String?
    /// When it stops being redeemable (10 minutes after issue).
    var expiresAt: Date
    /// Whether it was redeemed (a second redemption answers `invalid_grant` 54005).
    var redeemed = false
}
