import Foundation

/// The device authorization grant: knobs, the test's hand in the user's part, and observations.
extension FakeIdentityProvider {
    /// `<base>/contoso/oauth2/v2.0/devicecode`.
    var deviceAuthorizationEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.entraDeviceCodePath)" }
    /// `<base>/oidc/devicecode`.
    var oidcDeviceAuthorizationEndpoint: String { "\(self.baseURL)\(FakeIdentityEndpoints.oidcDeviceCodePath)" }

    // MARK: - Knobs

    /// `expires_in` of device codes issued from now on (seconds; default 900). Polls after it answer
    /// `expired_token` 70019.
    func setDeviceCodeLifetime(_ seconds: Int) {
        self.state.mutate { $0.deviceCodeLifetime = seconds }
    }

    /// `interval` of device codes issued from now on (seconds; default 5).
    func setDeviceCodeInterval(_ seconds: Int) {
        self.state.mutate { $0.deviceCodeInterval = seconds }
    }

    /// When on (default off), a poll arriving sooner than the code's `interval` after its previous poll answers
    /// `slow_down` and adds 5 s to the code's interval (RFC 8628 §3.5).
    func setDevicePollIntervalEnforced(_ enforced: Bool) {
        self.state.mutate { $0.devicePollIntervalEnforced = enforced }
    }

    /// Scripts the next `times` polls (of any device code the fake knows) to answer `answer`, before the code's
    /// state is looked at.
    func enqueueDevicePoll(_ answer: DevicePollAnswer, times: Int = 1) {
        self.state.mutate { data in
            for _ in 0..<max(0, times) { data.scriptedDevicePolls.append(answer) }
        }
    }

    // MARK: - The user's part

    /// The user enters `userCode` (case and `-` ignored) and signs in as `user`: the next poll gets tokens for the
    /// device-code request's scopes, once (a second redemption answers `bad_verification_code` 70018). Returns
    /// false if no pending code has that user code.
    @discardableResult
    func approveDeviceCode(userCode: String, as user: User) -> Bool {
        self.state.mutate { $0.register(user) }
        return self.settleDeviceCode(userCode, .approved(user))
    }

    /// The user declines: polls answer `authorization_declined` (65004). Returns false if no pending code has that
    /// user code.
    @discardableResult
    func declineDeviceCode(userCode: String) -> Bool {
        self.settleDeviceCode(userCode, .declined)
    }

    /// The code expires now: polls answer `expired_token` 70019. Returns false if no pending code has that user
    /// code.
    @discardableResult
    func expireDeviceCode(userCode: String) -> Bool {
        self.settleDeviceCode(userCode, .expired)
    }

    private func settleDeviceCode(_ userCode: String, _ status: DeviceAuthorization.Status) -> Bool {
        let wanted = userCode.uppercased().replacingOccurrences(of: "-", with: "")
        return self.state.mutate { data in
            guard let index = data.deviceAuthorizations.lastIndex(where: { $0.userCode == wanted }),
                data.deviceAuthorizations[index].status == .pending
            else { return false }
            data.deviceAuthorizations[index].status = status
            return true
        }
    }

    // MARK: - Observations

    /// Every device authorization issued, in order.
    var deviceAuthorizations: [DeviceAuthorization] {
        self.state.read { $0.deviceAuthorizations }
    }

    /// The most recent device authorization issued (its `userCode` is what a user would type).
    var lastDeviceAuthorization: DeviceAuthorization? {
        self.state.read { $0.deviceAuthorizations.last }
    }

    /// The form of every device authorization request (`client_id`, `scope`, ...), successful or not.
    var deviceCodeRequests: [[String: String]] {
        self.state.read { $0.deviceCodeRequests }
    }

    /// How many token requests with `grant_type=urn:ietf:params:oauth:grant-type:device_code` arrived.
    var devicePollCount: Int {
        self.state.read { $0.devicePollCount }
    }

    /// Waits until at least `n` device authorization requests have arrived.
    func waitForDeviceCodeRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .deviceCodeRequests(n), timeout: timeout)
    }

    /// Waits until at least `n` device-code polls have arrived.
    func waitForDevicePolls(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .devicePolls(n), timeout: timeout)
    }
}
