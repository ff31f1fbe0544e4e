/// What an IdP response established, before it is tied to a Firebase account: from a redeemed Microsoft code,
/// from emulator-style fake claims, or kept behind a `pendingToken` after `needConfirmation`.
struct FakeFirebaseFederatedIdentity: Sendable {
    var providerID: String
    /// The provider uid (`federatedId`, `firebase.identities[providerID]`).
    var federatedID: String
    var email: String?
    var emailVerified: Bool
    var displayName: String?
    /// `rawUserInfo`: JSON text.
    var rawUserInfo: String
    /// `oauthAccessToken`.
    var oauthAccessToken: String
    /// `oauthIdToken`, if any.
    var oauthIdToken: String?
    /// Whether the answer carries `oauthExpireIn` (not in emulator mode).
    var reportsExpireIn: Bool

    /// The IdP members of a signInWithIdp answer (no Firebase tokens).
    func members(oauthExpireIn: FakeFirebase.OAuthExpireIn) -> [String: Any] {
        var members: [String: Any] = [
            "kind": "identitytoolkit#VerifyAssertionResponse", "providerId": self.providerID,
            "federatedId": self.federatedID, "emailVerified": self.emailVerified, "rawUserInfo": self.rawUserInfo,
            "oauthAccessToken": self.oauthAccessToken,
        ]
        if let email = self.email { members["email"] = email }
        if let displayName = self.displayName { members["displayName"] = displayName }
        if let oauthIdToken = self.oauthIdToken { members["oauthIdToken"] = oauthIdToken }
        if self.reportsExpireIn, let expireIn = oauthExpireIn.jsonValue { members["oauthExpireIn"] = expireIn }
        return members
    }
}
