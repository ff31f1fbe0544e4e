/// Settings of the `native` flow: Microsoft Entra External ID native authentication.
public struct NativeAccount: Sendable, Hashable {
    /// How the user proves who they are.
    public enum Challenge: String, Sendable, Hashable, CaseIterable {
        case password
        /// An email one-time passcode, typed at a terminal prompt.
        case otp
    }

    /// An External ID (`*.ciamlogin.com`) authority.
    public var client: OAuthClient
    public var username: String
    /// Default `.password`.
    public var challenge: Challenge
    /// The variable holding the password; when unset (or not given) the password is asked for at a hidden prompt.
    public var passwordEnv: String?

    public init(client: OAuthClient, username: String, challenge: Challenge = .password, passwordEnv: String? = nil) {
        self.client = client
        self.username = username
        self.challenge = challenge
        self.passwordEnv = passwordEnv
    }
}
