/// Settings of the `static` flow: one fixed token (for example a personal access token).
public struct StaticTokenAccount: Sendable, Hashable {
    /// The name of the environment variable holding the token (checked to be set at load time).
    public var tokenEnv: String

    public init(tokenEnv: String) {
        self.tokenEnv = tokenEnv
    }
}
