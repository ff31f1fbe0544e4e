extension FakeIdentityProvider {
    /// What the fake knows at start: its tenant, the registered clients and users, token lifetimes and the refresh
    /// token rotation rules. Lifetimes and rotation can be changed later through the provider's knobs.
    struct Configuration: Sendable {
        /// The directory (tenant) id: the `tid` of every token and the `utid` of `client_info`.
        var tenantID: String = FakeIdentityProvider.defaultTenantID
        /// The registered applications. Default: `Client.publicClient` and `Client.confidentialClient` (secret
        /// `Client.confidentialClientSecret` plus the fixture certificate `CertificateFixtures.client`).
        var clients: [Client] = [.publicClient, .confidentialClient]
        /// The users known up front (`issueRefreshToken(for:)` adds others as they are used).
        var users: [User] = [.alice, .bob]
        /// `expires_in` of every access token (seconds) unless a per-scope value is set.
        var expiresIn: Int = 3599
        /// `ext_expires_in` (seconds); nil: equal to the token's `expires_in`.
        var extExpiresIn: Int?
        /// `refresh_in` (seconds) to include in token responses; nil: the field is left out.
        var refreshIn: Int?
        /// Whether a successful refresh_token grant returns a new refresh token. When off, the response carries
        /// no `refresh_token` at all (the client keeps the one it has).
        var rotateRefreshTokens = true
        /// What happens to a refresh token once a newer one has been issued in its place.
        var supersededRefreshTokens: SupersededRefreshTokenPolicy = .remainValid
        /// Whether a refresh token is returned only when `offline_access` was requested (Microsoft's documented
        /// rule). When false, a refresh_token grant always gets one (subject to `rotateRefreshTokens`).
        var refreshTokenNeedsOfflineAccess = true
        /// How far in the future a client assertion's `nbf`/`iat` may be (clock skew), in seconds.
        var assertionClockSkew = 300
        /// How far in the future a client assertion's `exp` may be, in seconds.
        var maximumAssertionLifetime = 3600
    }

    /// What happens to a refresh token after it has been rotated (a newer one was issued when it was redeemed).
    enum SupersededRefreshTokenPolicy: Sendable, Equatable {
        /// It stays valid (what Microsoft Entra does).
        case remainValid
        /// It may be redeemed this many more times, then it is rejected (`invalid_grant` 70000).
        case graceUses(Int)
        /// It is rejected at once (`invalid_grant` 70000), as with strict rotation (OAuth 2.1 style).
        case invalid
        /// As `invalid`, and redeeming it revokes every refresh token of its user and client — the whole family
        /// (Auth0's and Okta's reuse detection; OAuth 2.0 Security BCP §4.14.2): one reuse signs every process out.
        case invalidRevokingFamily
    }
}
