import Foundation

/// The device authorization grant (RFC 8628 as Microsoft Entra serves it): `/devicecode` and the token
/// endpoint's `urn:ietf:params:oauth:grant-type:device_code` polls. Tests play the user with
/// `approveDeviceCode(userCode:as:)`, `declineDeviceCode(userCode:)` and `expireDeviceCode(userCode:)`.
extension FakeIdentityGrants {
    /// `POST …/devicecode` (`client_id`, `scope`): `device_code`, `user_code`, `verification_uri`, `expires_in`,
    /// `interval`, `message`.
    func deviceAuthorization(_ form: [String: String], baseURL: String, data: inout FakeIdentityData, now: Date)
        -> Result<[String: Any], FakeIdentityError>
    {
        guard let clientID = form["client_id"], !clientID.isEmpty else {
            return .failure(.missingParameter("client_id"))
        }
        guard self.clients[clientID] != nil else {
            return .failure(FakeIdentityError(error: "unauthorized_client", codes: [700016]))
        }
        if case .failure(let error) = self.userScopes(form["scope"]) { return .failure(error) }
        var userCode: String
        repeat {
            userCode = String((0..<8).map { _ in Self.userCodeAlphabet.randomElement()! })
        } while data.deviceAuthorizations.contains { $0.userCode == userCode }
        let authorization = FakeIdentityProvider.DeviceAuthorization(
            userCode: userCode, deviceCode: Self.randomToken("FakeDC."), clientID: clientID, scope: form["scope"] ?? "",
            interval: data.deviceCodeInterval,
            expiresAt: now.addingTimeInterval(TimeInterval(data.deviceCodeLifetime)), status: .pending)
        data.deviceAuthorizations.append(authorization)
        let verificationURI = "\(baseURL)/contoso/devicelogin"
        return .success([
            "device_code": authorization.deviceCode, "user_code": userCode, "verification_uri": verificationURI,
            "expires_in": data.deviceCodeLifetime, "interval": authorization.interval,
            "message":
                "To sign in, use a web browser to open the page \(verificationURI) and enter the code \(userCode) to authenticate.",
        ])
    }

    /// A poll (`device_code`): scripted answers first, then `slow_down` if polled faster than `interval` (when
    /// enforced), then the code's state.
    func deviceCodeGrant(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, record: inout RecordedTokenRequest,
        data: inout FakeIdentityData, now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard let deviceCode = request.parameters["device_code"], !deviceCode.isEmpty else {
            return .failure(.missingParameter("device_code"))
        }
        guard let index = data.deviceAuthorizations.lastIndex(where: { $0.deviceCode == deviceCode }),
            data.deviceAuthorizations[index].clientID == client.id
        else {
            return .failure(FakeIdentityError(error: "bad_verification_code", codes: [70018]))
        }
        var authorization = data.deviceAuthorizations[index]
        defer { data.deviceAuthorizations[index] = authorization }
        if !data.scriptedDevicePolls.isEmpty {
            switch data.scriptedDevicePolls.removeFirst() {
            case .slowDown: return .failure(Self.slowDown)
            case .authorizationPending: return .failure(Self.authorizationPending)
            }
        }
        if authorization.status == .redeemed {
            return .failure(
                FakeIdentityError(
                    error: "bad_verification_code", codes: [70018], message: "The device code was already redeemed."))
        }
        if authorization.status == .expired || now >= authorization.expiresAt {
            authorization.status = .expired
            return .failure(FakeIdentityError(error: "expired_token", codes: [70019]))
        }
        switch authorization.status {
        case .pending:
            return .failure(Self.authorizationPending)
        case .declined:
            return .failure(FakeIdentityError(error: "authorization_declined", codes: [65004]))
        case .approved(let user):
            guard case .success(let scopes) = self.userScopes(authorization.scope) else {
                return .failure(.invalidRequest(28000))
            }
            authorization.status = .redeemed
            return .success(
                self.userTokenResponse(
                    for: user, client: client, scopes: scopes, issuer: request.issuer,
                    clientInfo: Self.wantsClientInfo(request), nonce: nil, record: &record, data: &data, now: now))
        case .redeemed, .expired:
            return .failure(FakeIdentityError(error: "bad_verification_code", codes: [70018]))
        }
    }

    /// The characters of user codes (no `0`, `1`, `I`, `O`).
    static let userCodeAlphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")

    /// `authorization_pending` 70016.
    static let authorizationPending = FakeIdentityError(error: "authorization_pending", codes: [70016])

    /// `slow_down` (no AADSTS code: Entra does not document it).
    static let slowDown = FakeIdentityError(
        error: "slow_down", codes: [], message: "The client is polling too quickly; add 5 seconds to the interval.")
}
