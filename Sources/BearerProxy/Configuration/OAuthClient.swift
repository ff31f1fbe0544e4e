/// The settings every OAuth flow shares: where to sign in and as which client application.
public struct OAuthClient: Sendable, Hashable {
    public var endpoint: IdentityEndpoint
    public var clientId: String
    /// Added to authorization and token requests (e.g. `resource`, `audience`); default none.
    public var extraParameters: [String: String]
    /// Sent as the `xms_cc` claims request (e.g. `["cp1"]` for continuous access evaluation); default none.
    public var clientCapabilities: [String]

    public init(
        endpoint: IdentityEndpoint,
        clientId: String,
        extraParameters: [String: String] = [:],
        clientCapabilities: [String] = []
    ) {
        self.endpoint = endpoint
        self.clientId = clientId
        self.extraParameters = extraParameters
        self.clientCapabilities = clientCapabilities
    }
}
