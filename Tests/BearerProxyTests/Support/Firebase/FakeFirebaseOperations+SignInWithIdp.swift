import Foundation

/// `accounts:signInWithIdp`: works out which federated identity the request proves (a `pendingToken`, the
/// Microsoft callback in `requestUri`, or in emulator mode fake claims in `postBody`), then hands it to
/// `federatedSignIn` to pick the account.
extension FakeFirebaseOperations {
    /// The answer to signInWithIdp. Errors (400): no `requestUri` → `MISSING_REQUEST_URI`; not a URL →
    /// `INVALID_REQUEST_URI`; unknown `pendingToken` → `INVALID_PENDING_TOKEN`; Microsoft tokens in `postBody`
    /// (production) → `INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential:
    /// http://localhost?id_token=…&providerId=microsoft.com`; neither a code nor tokens → the same code with the
    /// `requestUri`; callback problems → `INVALID_IDP_RESPONSE : …` (see `identityFromCallback`);
    /// `microsoft.com` disabled → `OPERATION_NOT_ALLOWED`. Then `federatedSignIn`.
    func signInWithIdp(_ body: [String: Any], data: inout FakeFirebaseData, now: Date) -> Result<
        [String: Any], FakeFirebaseError
    > {
        guard let requestURI = body["requestUri"] as? String, !requestURI.isEmpty else {
            return .failure(.bad("MISSING_REQUEST_URI"))
        }
        guard let components = URLComponents(string: requestURI), components.scheme != nil else {
            return .failure(.bad("INVALID_REQUEST_URI"))
        }
        // The emulator merges the query, the fragment and postBody; a form_post callback puts code and state in
        // postBody too.
        var pairs = (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
        if let fragment = components.fragment { pairs += FakeIdentityForm.decode(fragment).map { ($0.name, $0.value) } }
        if let postBody = body["postBody"] as? String {
            pairs += FakeIdentityForm.decode(postBody).map { ($0.name, $0.value) }
        }
        let parameters = Dictionary(pairs, uniquingKeysWith: { _, last in last })
        let pendingToken = (body["pendingToken"] as? String).flatMap { $0.isEmpty ? nil : $0 }

        let identity: Result<FakeFirebaseFederatedIdentity, FakeFirebaseError>
        if let pendingToken {
            if let pending = data.pendingTokens[pendingToken] {
                identity = .success(pending)
            } else {
                identity = .failure(.bad("INVALID_PENDING_TOKEN"))
            }
        } else if data.emulatorMode {
            identity = Self.identityFromFakeClaims(parameters, requestURI: requestURI, pairs: pairs)
        } else if parameters["id_token"] != nil || parameters["access_token"] != nil {
            var shown = pairs.filter { $0.0 != "providerId" }.map { "\($0.0)=\($0.1)" }
            if let providerID = parameters["providerId"] { shown.append("providerId=\(providerID)") }
            let base = requestURI.split(separator: "?", maxSplits: 1).first.map(String.init) ?? requestURI
            return .failure(
                .bad(
                    "INVALID_CREDENTIAL_OR_PROVIDER_ID",
                    "Invalid IdP response/credential: \(base)?\(shown.joined(separator: "&"))"))
        } else if parameters["code"] != nil || parameters["error"] != nil || parameters["state"] != nil {
            identity = self.identityFromCallback(
                parameters, requestURI: requestURI, sessionID: body["sessionId"] as? String, data: &data, now: now)
        } else {
            return .failure(.bad("INVALID_CREDENTIAL_OR_PROVIDER_ID", "Invalid IdP response/credential: \(requestURI)"))
        }

        switch identity {
        case .failure(let error):
            return .failure(error)
        case .success(let identity):
            return self.federatedSignIn(
                identity, idToken: (body["idToken"] as? String).flatMap { $0.isEmpty ? nil : $0 },
                pendingToken: pendingToken, returnIdpCredential: body["returnIdpCredential"] as? Bool ?? false,
                autoCreate: body["autoCreate"] as? Bool ?? true, data: &data, now: now)
        }
    }

    /// Production: the Microsoft callback of a createAuthUri session. `INVALID_IDP_RESPONSE : …` when the callback
    /// carries `error`; has no `code`; the request has no `sessionId`; `state` is missing or matches no session;
    /// the session has another `sessionId` or was already used; `requestUri` is not the session's `continueUri`
    /// (scheme, host, port, path); the code is unknown (`AADSTS9002313`), already redeemed (`AADSTS54005`) or
    /// was issued for another `state` / `redirect_uri`. A code is spent once looked up; the session once signed in.
    func identityFromCallback(
        _ parameters: [String: String], requestURI: String, sessionID: String?, data: inout FakeFirebaseData,
        now: Date
    ) -> Result<FakeFirebaseFederatedIdentity, FakeFirebaseError> {
        func invalid(_ detail: String) -> Result<FakeFirebaseFederatedIdentity, FakeFirebaseError> {
            .failure(.bad("INVALID_IDP_RESPONSE", detail))
        }
        if let error = parameters["error"] {
            return invalid("\(error): \(parameters["error_description"] ?? "")")
        }
        guard let code = parameters["code"], !code.isEmpty else {
            return invalid("The authorization response has no code.")
        }
        guard let sessionID, !sessionID.isEmpty else {
            return invalid("The sessionId of the createAuthUri call is required.")
        }
        guard let state = parameters["state"], let index = data.sessions.firstIndex(where: { $0.state == state })
        else { return invalid("The state does not match any createAuthUri session.") }
        let session = data.sessions[index]
        guard session.sessionID == sessionID else {
            return invalid("The state belongs to another session than sessionId.")
        }
        guard !session.consumed else { return invalid("This sign-in session has already been used.") }
        guard Self.sameRedirect(requestURI, session.continueURI) else {
            return invalid("The requestUri does not match the continueUri of the session.")
        }
        guard var issued = data.codes[code] else {
            return invalid("AADSTS9002313: Invalid request. Request is malformed or invalid.")
        }
        guard !issued.used else {
            return invalid(
                "AADSTS54005: OAuth2 Authorization code was already redeemed, please retry with a new valid code or "
                    + "use an existing refresh token.")
        }
        issued.used = true
        data.codes[code] = issued
        guard issued.state == state, Self.sameRedirect(issued.redirectURI, session.continueURI) else {
            return invalid("AADSTS50148: The code was issued for another sign-in (state or redirect_uri differ).")
        }
        data.sessions[index].consumed = true
        return .success(
            self.microsoftIdentity(issued.user, scopes: issued.scopes, oauthExpireIn: data.oauthExpireIn, now: now))
    }

    /// Emulator mode: `providerId` and `id_token` (strict JSON claims, or an unsigned JWT) from the merged
    /// parameters, as the Auth emulator reads them. No `providerId` → `INVALID_CREDENTIAL_OR_PROVIDER_ID`; an
    /// unparsable `id_token` or one without a string `sub` → `INVALID_IDP_RESPONSE`; only an `access_token` →
    /// 501. `federatedId` = `sub`; `oauthAccessToken` = the `access_token` or
    /// `FirebaseAuthEmulatorFakeAccessToken_<providerId>`; `oauthIdToken` = the `id_token`; no `oauthExpireIn`.
    static func identityFromFakeClaims(
        _ parameters: [String: String], requestURI: String, pairs: [(String, String)]
    ) -> Result<FakeFirebaseFederatedIdentity, FakeFirebaseError> {
        guard let providerID = parameters["providerId"], !providerID.isEmpty else {
            let shown = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            let base = requestURI.split(separator: "?", maxSplits: 1).first.map(String.init) ?? requestURI
            return .failure(
                .bad("INVALID_CREDENTIAL_OR_PROVIDER_ID", "Invalid IdP response/credential: \(base)?\(shown)"))
        }
        let idToken = parameters["id_token"]
        guard let idToken, !idToken.isEmpty else {
            return .failure(
                FakeFirebaseError(
                    status: 501,
                    message: "The Auth Emulator only support sign-in with google.com using id_token, not "
                        + "access_token. Please update your code to use id_token."))
        }
        guard let claims = FakeIdentityJWT.object(Array(idToken.utf8)) ?? FakeFirebaseJWT.unverifiedClaims(idToken)
        else {
            return .failure(
                .bad(
                    "INVALID_IDP_RESPONSE",
                    "Unable to parse id_token: \(idToken) (Auth Emulator only accepts strict JSON or JWTs as fake "
                        + "id_tokens.)"))
        }
        guard let sub = claims["sub"] as? String, !sub.isEmpty else {
            return .failure(
                .bad("INVALID_IDP_RESPONSE", "Invalid Idp Response: id_token missing required fields. sub is required.")
            )
        }
        return .success(
            FakeFirebaseFederatedIdentity(
                providerID: providerID, federatedID: sub, email: claims["email"] as? String,
                emailVerified: claims["email_verified"] as? Bool ?? false, displayName: claims["name"] as? String,
                rawUserInfo: String(decoding: FakeIdentityJWT.json(claims), as: UTF8.self),
                oauthAccessToken: parameters["access_token"] ?? "FirebaseAuthEmulatorFakeAccessToken_\(providerID)",
                oauthIdToken: idToken, reportsExpireIn: false))
    }
}

/// The account side of signInWithIdp (one account per email, as Firebase projects default to): link to the
/// account of `idToken`, sign in the account already linked, ask for confirmation when another account has the
/// email, or create an account.
extension FakeFirebaseOperations {
    /// Signs `identity` in. In order:
    /// 1. With `idToken` (link): the token's account (`INVALID_ID_TOKEN`, `TOKEN_EXPIRED`, `USER_NOT_FOUND`,
    ///    `USER_DISABLED`) gets the provider linked — unless another account has this federated id
    ///    (`FEDERATED_USER_ID_ALREADY_LINKED`) or the identity's email (`EMAIL_EXISTS`): 200 with `errorMessage`
    ///    and the credential when `returnIdpCredential`, else 400; or the account has another identity of this
    ///    provider (400 `PROVIDER_ALREADY_LINKED`). Tokens for that account; `isNewUser:false`; the
    ///    `pendingToken` is spent.
    /// 2. An account already linked to the federated id signs in (`USER_DISABLED` if disabled).
    /// 3. Another account has the email: if the provider verified it, that account is linked and signed in;
    ///    otherwise 200 `needConfirmation:true` with that account's `localId`, `verifiedProvider` (its sign-in
    ///    methods, e.g. `["password"]`), a `pendingToken` and the credential, and no Firebase tokens.
    /// 4. Else a new account (`isNewUser:true`), unless `autoCreate:false` (`USER_NOT_FOUND`).
    func federatedSignIn(
        _ identity: FakeFirebaseFederatedIdentity, idToken: String?, pendingToken: String?,
        returnIdpCredential: Bool, autoCreate: Bool, data: inout FakeFirebaseData, now: Date
    ) -> Result<[String: Any], FakeFirebaseError> {
        var answer = identity.members(oauthExpireIn: data.oauthExpireIn)
        let provider = identity.providerID
        let owner = data.account(linkedTo: identity.federatedID, providerID: provider)

        if let idToken {
            let account: FakeFirebase.Account
            switch self.account(ofIDToken: idToken, data: data, now: now) {
            case .failure(let error): return .failure(error)
            case .success(let found): account = found
            }
            // Production answers these two with 200 + errorMessage and the credential under returnIdpCredential.
            func conflict(_ code: String) -> Result<[String: Any], FakeFirebaseError> {
                guard returnIdpCredential else { return .failure(.bad(code)) }
                answer["errorMessage"] = code
                return .success(answer)
            }
            if let owner, owner.localID != account.localID { return conflict("FEDERATED_USER_ID_ALREADY_LINKED") }
            if let linked = account.federatedIDs[provider], linked != identity.federatedID {
                return .failure(.bad("PROVIDER_ALREADY_LINKED"))
            }
            if let email = identity.email, let other = data.account(email: email), other.localID != account.localID {
                return conflict("EMAIL_EXISTS")
            }
            data.accounts[account.localID]?.federatedIDs[provider] = identity.federatedID
            if account.email == nil { data.accounts[account.localID]?.email = identity.email }
            if let pendingToken { data.pendingTokens[pendingToken] = nil }
            return .success(self.signedIn(data.accounts[account.localID]!, answer, isNewUser: false, &data, now))
        }

        if let owner {
            guard !owner.disabled else { return .failure(.bad("USER_DISABLED")) }
            if let pendingToken { data.pendingTokens[pendingToken] = nil }
            return .success(self.signedIn(owner, answer, isNewUser: false, &data, now))
        }

        if let email = identity.email, let existing = data.account(email: email) {
            guard !existing.disabled else { return .failure(.bad("USER_DISABLED")) }
            if identity.emailVerified {
                data.accounts[existing.localID]?.federatedIDs[provider] = identity.federatedID
                if let pendingToken { data.pendingTokens[pendingToken] = nil }
                return .success(self.signedIn(data.accounts[existing.localID]!, answer, isNewUser: false, &data, now))
            }
            let token = pendingToken ?? "AMzJoS" + Self.randomString(100)
            data.pendingTokens[token] = identity
            answer["needConfirmation"] = true
            answer["localId"] = existing.localID
            answer["verifiedProvider"] = existing.providers.filter { $0 != provider }
            answer["pendingToken"] = token
            return .success(answer)
        }

        guard autoCreate else { return .failure(.bad("USER_NOT_FOUND")) }
        var account = data.createAccount(
            email: identity.email, emailVerified: identity.emailVerified, displayName: identity.displayName,
            password: nil)
        account.federatedIDs[provider] = identity.federatedID
        data.accounts[account.localID] = account
        if let pendingToken { data.pendingTokens[pendingToken] = nil }
        return .success(self.signedIn(account, answer, isNewUser: true, &data, now))
    }

    /// `answer` plus the Firebase session of `account` signed in with the identity's provider.
    private func signedIn(
        _ account: FakeFirebase.Account, _ answer: [String: Any], isNewUser: Bool, _ data: inout FakeFirebaseData,
        _ now: Date
    ) -> [String: Any] {
        let provider = answer["providerId"] as? String ?? "microsoft.com"
        var answer = answer
        answer.merge(self.signIn(account, signInProvider: provider, data: &data, now: now)) { _, new in new }
        answer["isNewUser"] = isNewUser
        if answer["displayName"] == nil, let name = account.displayName { answer["displayName"] = name }
        if answer["email"] == nil, let email = account.email { answer["email"] = email }
        return answer
    }
}
