import Foundation

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

/// The browser side: the authorization endpoint (code + PKCE, loopback redirect) and revocation.
extension FakeIdentityProvider {

    // MARK: - Knobs

    /// What a valid authorization request gets from now on (default `.signIn`).
    func setAuthorizeOutcome(_ outcome: AuthorizeOutcome) {
        self.state.mutate { $0.authorizeOutcome = outcome }
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

    /// Every revocation request, in arrival order.
    var revocations: [RecordedRevocation] {
        self.state.read { $0.revocations }
    }

    /// How many refresh tokens revocation requests revoked.
    var revokedTokenCount: Int {
        self.state.read { $0.revocations.count { $0.refreshTokenID != nil } }
    }
}

extension FakeIdentityProvider {
    /// What the authorization endpoint does with a valid request (`setAuthorizeOutcome(_:)`): the browser
    /// session's result. Requests with bad parameters are answered before the outcome applies.
    enum AuthorizeOutcome: Sendable, Equatable {
        /// The browser user (`setBrowserUser(_:)`, default Alice) signs in: `302 Location:
        /// <redirect_uri>?code=CODE&state=STATE`.
        case signIn
        /// The sign-in fails: `302 Location: <redirect_uri>?error=ERROR&error_description=DESCRIPTION&state=STATE`.
        case error(error: String, description: String)
        /// A code is issued, but the redirect carries a different `state` (`<state>-tampered`, or `tampered` when
        /// the request had none): a forged or mixed-up callback the client must reject.
        case wrongState
    }
}

/// The device authorization grant: knobs, the test's hand in the user's part, and observations.
extension FakeIdentityProvider {

    // MARK: - Knobs

    /// `interval` of device codes issued from now on (seconds; default 5).
    func setDeviceCodeInterval(_ seconds: Int) {
        self.state.mutate { $0.deviceCodeInterval = seconds }
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

    /// The most recent device authorization issued (its `userCode` is what a user would type).
    var lastDeviceAuthorization: DeviceAuthorization? {
        self.state.read { $0.deviceAuthorizations.last }
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

extension FakeIdentityProvider {
    /// A device authorization the fake granted (`lastDeviceAuthorization`, `deviceAuthorizations`): what the
    /// `/devicecode` answer carried and where the code stands now.
    struct DeviceAuthorization: Sendable, Equatable {
        /// Where the code stands.
        enum Status: Sendable, Equatable {
            /// Polls answer `authorization_pending`.
            case pending
            /// `approveDeviceCode(userCode:as:)` was called; the next poll gets tokens for this user.
            case approved(User)
            /// The approved code was redeemed; further polls answer `bad_verification_code`.
            case redeemed
            /// `declineDeviceCode(userCode:)` was called: polls answer `authorization_declined`.
            case declined
            /// `expireDeviceCode(userCode:)` was called (polls after `expires_in` get the same answer):
            /// `expired_token`.
            case expired
        }

        /// `user_code` (8 characters of `A-Z` and `2-9`, without `I` and `O`).
        var userCode: String
        /// `device_code`.
        var deviceCode: String
        /// The client that asked.
        var clientID: String
        /// `scope` as requested (the scopes the tokens are issued for).
        var scope: String
        /// `interval` as answered (seconds; grows by 5 for every `slow_down` the interval enforcement sends).
        var interval: Int
        /// When `expires_in` runs out.
        var expiresAt: Date
        /// Where the code stands.
        var status: Status
    }
}

extension FakeIdentityProvider {
    /// A scripted answer to the next device-code poll (`enqueueDevicePoll(_:)`), played before the device code's
    /// own state is looked at (an unknown `device_code` is still `bad_verification_code`). Scripted answers do not
    /// change the device code's state.
    enum DevicePollAnswer: Sendable, Equatable {
        /// `400 {"error":"slow_down",...}` (RFC 8628 §3.5; Entra has no AADSTS code for it, `error_codes` is
        /// `[]`).
        case slowDown
        /// `400 {"error":"authorization_pending","error_codes":[70016],...}`, even if the code was approved.
        case authorizationPending
    }
}

/// Native authentication (Entra External ID, V1): users and their sign-in knobs, continuation tokens, the codes
/// "emailed", what clients sent. Sequence and wire format: `FakeIdentityProvider`'s overview.
extension FakeIdentityProvider {

    // MARK: - Users

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

    /// Makes the next `times` requests to `endpoint` fail as `failure` (used in order; Entra errors answer in
    /// JSON, also at the authorization endpoint). Token-endpoint grants use
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

}
