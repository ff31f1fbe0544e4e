/// Settings of the `browser` flow: authorization code + PKCE with a loopback redirect (RFC 8252).
public struct BrowserAccount: Sendable, Hashable {
    public var client: OAuthClient
    public var prompt: SignInPrompt?
    /// Pre-fills the user name (`login_hint`).
    public var loginHint: String?
    /// Skips home-realm discovery (`domain_hint`).
    public var domainHint: String?
    /// The loopback port for the redirect; 0 (the default) = any free port.
    public var redirectPort: Int

    public init(
        client: OAuthClient,
        prompt: SignInPrompt? = nil,
        loginHint: String? = nil,
        domainHint: String? = nil,
        redirectPort: Int = 0
    ) {
        self.client = client
        self.prompt = prompt
        self.loginHint = loginHint
        self.domainHint = domainHint
        self.redirectPort = redirectPort
    }
}
