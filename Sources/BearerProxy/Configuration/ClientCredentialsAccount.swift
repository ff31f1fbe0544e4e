/// Settings of the `client-credentials` flow: the application signs in as itself.
public struct ClientCredentialsAccount: Sendable, Hashable {
    /// How the application proves its identity.
    public enum Credential: Sendable, Hashable {
        /// The name of the environment variable holding the client secret (checked to be set at load time).
        case secretEnv(String)
        /// PEM files for a signed client assertion (checked to exist at load time; absolute paths).
        case certificate(certFile: String, keyFile: String)
    }

    /// Where a client secret goes (RFC 6749 §2.3.1): the form body (`post`, MSAL's default) or HTTP Basic.
    public enum SecretMethod: String, Sendable, Hashable, CaseIterable {
        case post
        case basic
    }

    /// How a client assertion is signed: PS256 with `x5t#S256` (Microsoft's current recommendation) or the
    /// legacy RS256 with a SHA-1 `x5t`.
    public enum AssertionAlgorithm: String, Sendable, Hashable, CaseIterable {
        case ps256 = "PS256"
        case rs256 = "RS256"
    }

    public var client: OAuthClient
    public var credential: Credential
    /// `clientAuthentication`, default `post`; only meaningful with a secret.
    public var secretMethod: SecretMethod
    /// `certificate.algorithm`, default `PS256`; only meaningful with a certificate.
    public var assertionAlgorithm: AssertionAlgorithm

    public init(
        client: OAuthClient, credential: Credential, secretMethod: SecretMethod = .post,
        assertionAlgorithm: AssertionAlgorithm = .ps256
    ) {
        self.client = client
        self.credential = credential
        self.secretMethod = secretMethod
        self.assertionAlgorithm = assertionAlgorithm
    }
}
