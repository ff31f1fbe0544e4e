import Foundation

/// Native authentication (Entra External ID, V1): users and their sign-in knobs, continuation tokens, the codes
/// "emailed", what clients sent. Sequence and wire format: `FakeIdentityProvider`'s overview.
extension FakeIdentityProvider {
    /// `<base>/contoso/oauth2/v2.0/initiate`.
    var initiateEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.initiatePath)" }
    /// `<base>/contoso/oauth2/v2.0/challenge`.
    var challengeEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.challengePath)" }

    // MARK: - Users

    /// Adds a user (or replaces the known user with the same `oid`), so `/initiate` finds them by
    /// `preferredUsername` and the browser or a device code can sign them in.
    func registerUser(_ user: User) {
        self.state.mutate { $0.register(user) }
    }

    /// Whether `user`'s native sign-in stops, after the credential checked out, with `invalid_grant` 50076 and
    /// suberror `mfa_required` (plus a new `continuation_token`; the fake serves no `/introspect`, so the flow ends).
    func setMFARequired(_ required: Bool = true, for user: User) {
        self.setRequirement(.mfa, required, for: user)
    }

    /// Whether `user`'s native sign-in stops, after the credential checked out, with `invalid_grant` 50079 and
    /// suberror `registration_required` (plus a new `continuation_token`).
    func setRegistrationRequired(_ required: Bool = true, for user: User) {
        self.setRequirement(.registration, required, for: user)
    }

    /// Whether `user`'s `password` grant, once the password checked out, answers `invalid_request` 50142
    /// (password reset required).
    func setPasswordResetRequired(_ required: Bool = true, for user: User) {
        self.setRequirement(.passwordReset, required, for: user)
    }

    private func setRequirement(_ requirement: SignInRequirement, _ required: Bool, for user: User) {
        self.state.mutate { data in
            if required {
                data.signInRequirements[user.oid, default: []].insert(requirement)
            } else {
                data.signInRequirements[user.oid]?.remove(requirement)
            }
        }
    }

    // MARK: - Continuation tokens and codes

    /// The lifetime of continuation tokens issued from now on (seconds; default 600). Once expired, a token
    /// answers `expired_token` 552003.
    func setContinuationTokenLifetime(_ seconds: Int) {
        self.state.mutate { $0.continuationTokenLifetime = seconds }
    }

    /// Makes every continuation token issued so far expired (`expired_token` 552003).
    func expireContinuationTokens() {
        self.state.mutate { data in
            for id in data.nativeFlows.keys { data.nativeFlows[id]?.expiresAt = .distantPast }
        }
    }

    /// The one-time code most recently "emailed" to `user` by `/challenge` (only that one is accepted), if any.
    func lastOneTimeCode(for user: User) -> String? {
        self.state.read { $0.sentOneTimeCodes[user.oid]?.last }
    }

    /// How many one-time codes were "emailed" to `user` (each `/challenge` of an OTP flow sends one).
    func oneTimeCodesSent(to user: User) -> Int {
        self.state.read { $0.sentOneTimeCodes[user.oid]?.count ?? 0 }
    }

    // MARK: - Failures and observations

    /// Makes the next `times` requests to `endpoint` fail as `failure` (used in order; `.delay` delays the normal
    /// answer; Entra errors answer in JSON, also at the authorization endpoint). Token-endpoint grants use
    /// `enqueue(_:times:forScope:)` instead.
    func enqueue(_ failure: Failure, times: Int = 1, at endpoint: InteractiveEndpoint) {
        self.state.mutate { data in
            for _ in 0..<max(0, times) { data.interactiveFailures[endpoint, default: []].append(failure) }
        }
    }

    /// Every native-authentication request (`/initiate`, `/challenge`, and token requests with `grant_type`
    /// `password` or `oob`), in arrival order.
    var nativeRequests: [RecordedNativeRequest] {
        self.state.read { $0.nativeRequests }
    }

    /// Waits until at least `n` native-authentication requests have arrived.
    func waitForNativeRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .nativeRequests(n), timeout: timeout)
    }
}
