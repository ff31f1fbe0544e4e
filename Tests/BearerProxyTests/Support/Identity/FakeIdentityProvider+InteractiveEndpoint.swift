extension FakeIdentityProvider {
    /// An endpoint outside the token endpoint that failures can be injected into with `enqueue(_:times:at:)`.
    /// (The `password`, `oob`, `device_code` and `authorization_code` grants arrive at the token endpoint and
    /// take the token endpoint's failures: `enqueue(_:times:forScope:)`.)
    enum InteractiveEndpoint: String, Sendable, Hashable, CaseIterable {
        /// `POST /contoso/oauth2/v2.0/initiate` (native authentication).
        case initiate
        /// `POST /contoso/oauth2/v2.0/challenge` (native authentication).
        case challenge
        /// `POST /contoso/oauth2/v2.0/devicecode` and `/oidc/devicecode`.
        case deviceAuthorization
        /// `GET /contoso/oauth2/v2.0/authorize` and `/oidc/authorize`.
        case authorize
        /// `POST /oidc/revoke`.
        case revocation
    }
}
