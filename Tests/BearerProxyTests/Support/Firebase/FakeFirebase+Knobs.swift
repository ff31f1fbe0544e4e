/// The knobs: who signs in at Microsoft and how, project settings, lifetimes and injected failures. Each takes
/// effect from the next request.
extension FakeFirebase {
    /// Who signs in at `/microsoft/authorize` from now (codes already issued keep their user).
    func setMicrosoftUser(_ user: MicrosoftUser) {
        self.state.mutate { $0.microsoftUser = user }
    }

    /// What `/microsoft/authorize` does with valid requests from now (default `.signIn`).
    func setAuthorizeOutcome(_ outcome: AuthorizeOutcome) {
        self.state.mutate { $0.authorizeOutcome = outcome }
    }

    /// Enables or disables the `microsoft.com` provider (disabled: `OPERATION_NOT_ALLOWED`).
    func setMicrosoftEnabled(_ enabled: Bool) {
        self.state.mutate { $0.microsoftEnabled = enabled }
    }

    /// The authorized domains `continueUri` hosts must be in (default `["localhost"]`).
    func setAuthorizedDomains(_ domains: [String]) {
        self.state.mutate { $0.authorizedDomains = domains }
    }

    /// The Azure app's registered redirect URIs (nil: any is accepted). See `Configuration.registeredRedirectURIs`.
    func setRegisteredRedirectURIs(_ uris: [String]?) {
        self.state.mutate { $0.registeredRedirectURIs = uris }
    }

    /// Switches the emulator's behaviour on or off (see `Configuration.emulatorMode`).
    func setEmulatorMode(_ on: Bool) {
        self.state.mutate { $0.emulatorMode = on }
    }

    /// Email enumeration protection (default on): wrong email and wrong password both answer
    /// `INVALID_LOGIN_CREDENTIALS`; off: `EMAIL_NOT_FOUND` / `INVALID_PASSWORD`.
    func setEmailEnumerationProtection(_ on: Bool) {
        self.state.mutate { $0.emailEnumerationProtection = on }
    }

    /// The lifetime of ID tokens issued from now (`expiresIn`, `expires_in`, `exp`), in seconds (default 3600).
    func setExpiresIn(_ seconds: Int) {
        self.state.mutate { $0.expiresIn = seconds }
    }

    /// How `oauthExpireIn` is sent from now, and the Graph token's lifetime (default `.int(3599)`).
    func setOAuthExpireIn(_ value: OAuthExpireIn) {
        self.state.mutate { $0.oauthExpireIn = value }
    }

    /// Whether refreshes return a new refresh token (the old one stays valid). Default off, as production.
    func setRotateRefreshTokens(_ on: Bool) {
        self.state.mutate { $0.rotateRefreshTokens = on }
    }

    /// Makes the next `times` requests to `endpoint` fail as `failure` (after the API key check; nothing else is
    /// consumed). Queued failures are used in order.
    func enqueue(_ failure: Failure, at endpoint: Endpoint, times: Int = 1) {
        self.state.mutate { data in
            data.failures[endpoint, default: []] += Array(repeating: failure, count: max(0, times))
        }
    }

    /// `enqueue(_:at: .secureToken, times:)`: e.g. `.throttle(retryAfter: 2)` → 429 with `Retry-After: 2`,
    /// `.unavailable` → 503, `.error("TOKEN_EXPIRED")` → 400.
    func enqueueSecureToken(_ failure: Failure, times: Int = 1) {
        self.enqueue(failure, at: .secureToken, times: times)
    }

    /// Drops every queued failure.
    func clearFailures() {
        self.state.mutate { $0.failures = [:] }
    }
}
