import Foundation

/// Native authentication (Entra External ID, API V1): `/initiate`, `/challenge` and the token endpoint's
/// `password` and `oob` grants. Every answer moves the flow on with a new continuation token; failures leave the
/// flow (and its latest token) as it was, so the client can retry with the same token.
extension FakeIdentityGrants {
    /// `POST /oauth2/v2.0/initiate`: `{"continuation_token":…}`, `{"challenge_type":"redirect",…}` (HTTP 200) or an
    /// error.
    func initiate(_ form: [String: String], data: inout FakeIdentityData, now: Date)
        -> Result<[String: Any], FakeIdentityError>
    {
        let (client, offered): (FakeIdentityProvider.Client, Set<String>)
        switch self.nativeCall(form) {
        case .success(let call): (client, offered) = call
        case .failure(let error): return .failure(error)
        }
        guard let username = form["username"], !username.isEmpty else { return .failure(.missingParameter("username")) }
        guard let user = data.user(named: username) else {
            return .failure(FakeIdentityError(error: "user_not_found", codes: [50034]))
        }
        if !offered.contains(user.signInMethod.challengeType) { return .success(Self.redirect(for: user)) }
        let flowID = (data.nativeFlows.keys.max() ?? 0) + 1
        data.nativeFlows[flowID] = FakeIdentityNativeFlow(
            user: user, clientID: client.id, stage: .initiated, latestToken: "", expiresAt: now)
        return .success(["continuation_token": Self.advance(flowID, data: &data, now: now)])
    }

    /// `POST /oauth2/v2.0/challenge`: the user's method (`password`, or `oob` with a fresh code "emailed"; calling
    /// it again resends, invalidating the previous code), a redirect, or an error.
    func challenge(_ form: [String: String], data: inout FakeIdentityData, now: Date)
        -> Result<[String: Any], FakeIdentityError>
    {
        let (client, offered): (FakeIdentityProvider.Client, Set<String>)
        switch self.nativeCall(form) {
        case .success(let call): (client, offered) = call
        case .failure(let error): return .failure(error)
        }
        let flowID: Int
        switch Self.flow(for: form["continuation_token"], clientID: client.id, data: data, now: now) {
        case .success(let id): flowID = id
        case .failure(let error): return .failure(error)
        }
        guard var flow = data.nativeFlows[flowID] else { return .failure(Self.badContinuationToken()) }
        let method = flow.user.signInMethod
        if !offered.contains(method.challengeType) { return .success(Self.redirect(for: flow.user)) }
        flow.stage = .challenged(method)
        var answer: [String: Any] = ["challenge_type": method.challengeType]
        if method == .emailOneTimePasscode {
            var code: String
            repeat {
                code = String(format: "%08d", Int.random(in: 0..<100_000_000))
            } while code == flow.oneTimeCode
            flow.oneTimeCode = code
            data.sentOneTimeCodes[flow.user.oid, default: []].append(code)
            answer["binding_method"] = "prompt"
            answer["challenge_channel"] = "email"
            answer["challenge_target_label"] = Self.maskedEmail(flow.user.preferredUsername)
            answer["code_length"] = 8
        }
        data.nativeFlows[flowID] = flow
        answer["continuation_token"] = Self.advance(flowID, data: &data, now: now)
        return .success(answer)
    }

    /// The token endpoint's `password` (`continuation_token`, `password`, `scope`) and `oob` (`continuation_token`,
    /// `oob`, `scope`) grants.
    func nativeGrant(
        _ request: FakeIdentityTokenRequest, grantType: String, client: FakeIdentityProvider.Client,
        record: inout RecordedTokenRequest, data: inout FakeIdentityData, now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard client.nativeAuthEnabled else { return .failure(Self.nativeAuthDisabled) }
        let flowID: Int
        switch Self.flow(for: request.parameters["continuation_token"], clientID: client.id, data: data, now: now) {
        case .success(let id): flowID = id
        case .failure(let error): return .failure(error)
        }
        guard var flow = data.nativeFlows[flowID] else { return .failure(Self.badContinuationToken()) }
        let method: FakeIdentityProvider.SignInMethod = grantType == "password" ? .password : .emailOneTimePasscode
        guard flow.stage == .challenged(method) else {
            return .failure(
                Self.badContinuationToken(
                    "The continuation token is not for grant_type=\(grantType): /challenge must answer '\(method.challengeType)' first."
                ))
        }
        let scopes: FakeIdentityScopes
        switch self.userScopes(request.parameters["scope"]) {
        case .success(let parsed): scopes = parsed
        case .failure(let error): return .failure(error)
        }
        if method == .password {
            guard let password = request.parameters["password"] else { return .failure(.missingParameter("password")) }
            guard let expected = flow.user.password, password == expected else { return .failure(.invalidGrant(50126)) }
        } else {
            guard let code = request.parameters["oob"] else { return .failure(.missingParameter("oob")) }
            guard code == flow.oneTimeCode else {
                return .failure(
                    FakeIdentityError(
                        error: "invalid_grant", codes: [50181], suberror: "invalid_oob_value",
                        continuationToken: flow.latestToken))
            }
        }
        let requirements = data.signInRequirements[flow.user.oid] ?? []
        if method == .password && requirements.contains(.passwordReset) {
            return .failure(.invalidRequest(50142))
        }
        for (requirement, code, suberror) in [
            (FakeIdentityProvider.SignInRequirement.mfa, 50076, "mfa_required"),
            (.registration, 50079, "registration_required"),
        ]
        where requirements.contains(requirement) {
            flow.stage = .stopped(requirement)
            data.nativeFlows[flowID] = flow
            return .failure(
                FakeIdentityError(
                    error: "invalid_grant", codes: [code], suberror: suberror,
                    continuationToken: Self.advance(flowID, data: &data, now: now)))
        }
        flow.stage = .completed
        flow.oneTimeCode = nil
        data.nativeFlows[flowID] = flow
        return .success(
            self.userTokenResponse(
                for: flow.user, client: client, scopes: scopes, issuer: request.issuer,
                clientInfo: Self.wantsClientInfo(request), nonce: nil, record: &record, data: &data, now: now))
    }

    // MARK: - Helpers

    /// `invalid_client` (HTTP 400) with suberror `nativeauthapi_disabled`.
    static let nativeAuthDisabled = FakeIdentityError(
        status: 400, error: "invalid_client", codes: [7000112],
        message: "Native authentication is not enabled for this application.", suberror: "nativeauthapi_disabled")

    /// The client named by `client_id`, if it may use native authentication.
    /// What `/initiate` and `/challenge` both check first: a client registered for native authentication, and the
    /// challenge types it offers.
    private func nativeCall(_ form: [String: String])
        -> Result<(client: FakeIdentityProvider.Client, offered: Set<String>), FakeIdentityError>
    {
        self.nativeClient(form["client_id"]).flatMap { client in
            Self.challengeTypes(form).map { (client, $0) }
        }
    }

    private func nativeClient(_ clientID: String?) -> Result<FakeIdentityProvider.Client, FakeIdentityError> {
        guard let clientID, !clientID.isEmpty else { return .failure(.missingParameter("client_id")) }
        guard let client = self.clients[clientID] else {
            return .failure(FakeIdentityError(error: "unauthorized_client", codes: [700016]))
        }
        guard client.nativeAuthEnabled else { return .failure(Self.nativeAuthDisabled) }
        return .success(client)
    }

    /// The offered `challenge_type` values; `unsupported_challenge_type` (901007) unless `redirect` is among them.
    private static func challengeTypes(_ form: [String: String]) -> Result<Set<String>, FakeIdentityError> {
        let types = Set((form["challenge_type"] ?? "").split(separator: " ").map(String.init))
        guard types.contains("redirect") else {
            return .failure(FakeIdentityError(error: "unsupported_challenge_type", codes: [901007]))
        }
        return .success(types)
    }

    /// The id of the flow whose latest continuation token is `token`, if it may go on.
    private static func flow(for token: String?, clientID: String, data: FakeIdentityData, now: Date)
        -> Result<Int, FakeIdentityError>
    {
        guard let token, !token.isEmpty else { return .failure(.missingParameter("continuation_token")) }
        guard let id = data.continuationTokens[token], let flow = data.nativeFlows[id] else {
            return .failure(self.badContinuationToken())
        }
        guard flow.latestToken == token else {
            return .failure(self.badContinuationToken("The continuation token was superseded: send the latest one."))
        }
        guard flow.clientID == clientID else {
            return .failure(self.badContinuationToken("The continuation token was issued to a different client."))
        }
        guard now < flow.expiresAt else { return .failure(FakeIdentityError(error: "expired_token", codes: [552003])) }
        switch flow.stage {
        case .initiated, .challenged: return .success(id)
        case .stopped(let requirement):
            return .failure(
                self.badContinuationToken(
                    "The sign-in stopped at \(requirement); the fake serves no /introspect or registration endpoints."))
        case .completed:
            return .failure(self.badContinuationToken("The continuation token was already used to get tokens."))
        }
    }

    /// `invalid_grant` 55200 for a continuation token that cannot be used.
    private static func badContinuationToken(_ message: String? = nil) -> FakeIdentityError {
        .invalidGrant(55200, message)
    }

    /// Issues the flow's next continuation token (the only one accepted from now on) and returns it.
    private static func advance(_ flowID: Int, data: inout FakeIdentityData, now: Date) -> String {
        let token = Self.randomToken("FakeCT.")
        data.nativeFlows[flowID]?.latestToken = token
        data.nativeFlows[flowID]?.expiresAt = now.addingTimeInterval(TimeInterval(data.continuationTokenLifetime))
        data.continuationTokens[token] = flowID
        return token
    }

    /// The HTTP 200 answer telling the client to fall back to the browser.
    private static func redirect(for user: FakeIdentityProvider.User) -> [String: Any] {
        [
            "challenge_type": "redirect",
            "redirect_reason":
                "The user signs in with '\(user.signInMethod.challengeType)', which is not among the client's challenge types.",
        ]
    }

    /// An email address masked the way Entra labels a challenge target: `alice@contoso.example` →
    /// `a***e@co*****.example`.
    static func maskedEmail(_ email: String) -> String {
        guard let at = email.firstIndex(of: "@") else { return email }
        let local = email[..<at]
        let domain = email[email.index(after: at)...]
        let maskedLocal = "\(local.prefix(1))***\(local.count > 1 ? String(local.suffix(1)) : "")"
        let label = domain.prefix { $0 != "." }
        let rest = domain.dropFirst(label.count)
        let maskedLabel = label.prefix(2) + String(repeating: "*", count: max(0, label.count - 2))
        return "\(maskedLocal)@\(maskedLabel)\(rest)"
    }
}
