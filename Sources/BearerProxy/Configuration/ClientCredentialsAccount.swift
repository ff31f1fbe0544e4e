/// Settings of the `client-credentials` flow: the application signs in as itself.
public struct ClientCredentialsAccount: Sendable, Hashable {
    /// How the application proves its identity.
    public enum Credential: Sendable, Hashable {
        /// The name of the environment variable holding the client secret (checked to be set at load time).
        case secretEnv(String)
        /// PEM files for a signed client assertion (checked to exist at load time; absolute paths).
        case certificate(certFile: String, keyFile: String)
    }

    public var client: OAuthClient
    public var credential: Credential

    public init(client: OAuthClient, credential: Credential) {
        self.client = client
        self.credential = credential
    }
}
