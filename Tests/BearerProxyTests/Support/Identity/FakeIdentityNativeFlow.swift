import Foundation

/// One native-authentication sign-in in progress: started by `/initiate`, moved on by `/challenge` and the token
/// endpoint. Each answer issues a new continuation token; only the latest one (`latestToken`) is accepted, until
/// `expiresAt` — the client must always send the latest.
struct FakeIdentityNativeFlow: Sendable {
    /// How far the flow has got.
    enum Stage: Sendable, Equatable {
        /// `/initiate` answered; `/challenge` comes next.
        case initiated
        /// `/challenge` answered with this method; the token endpoint (or `/challenge` again, to resend) comes next.
        case challenged(FakeIdentityProvider.SignInMethod)
        /// The credential checked out but this requirement stops the sign-in (the fake serves no `/introspect` or
        /// registration endpoints, so the flow ends here).
        case stopped(FakeIdentityProvider.SignInRequirement)
        /// Tokens were issued; the flow's tokens are used up.
        case completed
    }

    /// Who is signing in.
    var user: FakeIdentityProvider.User
    /// The client that started the flow.
    var clientID: String
    /// How far it has got.
    var stage: Stage
    /// The only continuation token accepted now.
    var latestToken: String
    /// When `latestToken` expires.
    var expiresAt: Date
    /// The one-time code "emailed" by the latest `/challenge` (OTP users); earlier codes are invalid.
    var oneTimeCode: String?
}
