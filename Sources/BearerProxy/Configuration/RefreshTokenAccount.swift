/// Settings of the `refresh-token` flow: start from a refresh token obtained elsewhere.
public struct RefreshTokenAccount: Sendable, Hashable {
    public var client: OAuthClient
    /// The name of the environment variable holding the refresh token (checked to be set at load time).
    public var refreshTokenEnv: String

    public init(client: OAuthClient, refreshTokenEnv: String) {
        self.client = client
        self.refreshTokenEnv = refreshTokenEnv
    }
}
