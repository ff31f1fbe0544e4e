/// The browser side: the authorization endpoint (code + PKCE, loopback redirect) and revocation.
extension FakeIdentityProvider {
    /// `<base>/contoso/oauth2/v2.0/authorize`.
    var authorizationEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.entraAuthorizePath)" }
    /// `<base>/oidc/authorize`.
    var oidcAuthorizationEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.oidcAuthorizePath)" }
    /// `<base>/oidc/revoke`.
    var revocationEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.revocationPath)" }

    // MARK: - Knobs

    /// What a valid authorization request gets from now on (default `.signIn`).
    func setAuthorizeOutcome(_ outcome: AuthorizeOutcome) {
        self.state.mutate { $0.authorizeOutcome = outcome }
    }

    /// Who signs in at the authorization endpoint from now on (default Alice); registers the user if new.
    func setBrowserUser(_ user: User) {
        self.state.mutate { data in
            data.register(user)
            data.browserUser = user
        }
    }

    /// The S256 `code_challenge` of a PKCE `verifier`: unpadded base64url of its SHA-256.
    static func codeChallenge(for verifier: String) -> String {
        FakeIdentityGrants.codeChallenge(for: verifier)
    }

    // MARK: - Observations

    /// The query parameters of every authorization request, in arrival order (valid or not).
    var authorizeRequests: [[String: String]] {
        self.state.read { $0.authorizeRequests }
    }

    /// Waits until at least `n` authorization requests have arrived.
    func waitForAuthorizeRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .authorizeRequests(n), timeout: timeout)
    }

    /// Every revocation request, in arrival order.
    var revocations: [RecordedRevocation] {
        self.state.read { $0.revocations }
    }

    /// How many refresh tokens revocation requests revoked.
    var revokedTokenCount: Int {
        self.state.read { $0.revocations.count { $0.refreshTokenID != nil } }
    }
}
