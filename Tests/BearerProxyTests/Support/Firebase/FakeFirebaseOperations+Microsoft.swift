import Foundation

/// `accounts:createAuthUri` for `microsoft.com`: checks the request, remembers the session and answers the
/// `authUri` on the fake Microsoft authorization endpoint.
extension FakeFirebaseOperations {
    /// The `customParameter` names reserved for the authorization request itself.
    static let reservedCustomParameters: Set<String> = [
        "client_id", "response_type", "scope", "redirect_uri", "state", "response_mode",
    ]

    /// The answer to createAuthUri. Errors (all 400 unless noted):
    /// - emulator mode with a `providerId`: 501 `Sign-in with IDP is not yet supported.` (the emulator's answer);
    /// - no `providerId`: `MISSING_IDENTIFIER`; another than `microsoft.com`: `INVALID_PROVIDER_ID : Provider Id
    ///   is not supported.`; `microsoft.com` disabled: `OPERATION_NOT_ALLOWED : The identity provider
    ///   configuration is disabled.`;
    /// - no `continueUri`: `MISSING_CONTINUE_URI`; not an absolute http(s) URL, or with a fragment or a `state`
    ///   query parameter: `INVALID_CONTINUE_URI`; host not an authorized domain: `UNAUTHORIZED_DOMAIN : Domain
    ///   not allowlisted by project`;
    /// - a reserved `customParameter` name (`client_id, response_type, scope, redirect_uri, state,
    ///   response_mode`) or a non-string value: `INVALID_CUSTOM_PARAMETER : …` (the production code is
    ///   unknown; this one is the fake's).
    func createAuthUri(_ body: [String: Any], baseURL: String, data: inout FakeFirebaseData) -> Result<
        [String: Any], FakeFirebaseError
    > {
        let providerID = body["providerId"] as? String ?? ""
        if data.emulatorMode, !providerID.isEmpty {
            return .failure(FakeFirebaseError(status: 501, message: "Sign-in with IDP is not yet supported."))
        }
        guard !providerID.isEmpty else { return .failure(.bad("MISSING_IDENTIFIER")) }
        guard providerID == "microsoft.com" else {
            return .failure(.bad("INVALID_PROVIDER_ID", "Provider Id is not supported."))
        }
        guard let continueURI = body["continueUri"] as? String, !continueURI.isEmpty else {
            return .failure(.bad("MISSING_CONTINUE_URI"))
        }
        guard let components = URLComponents(string: continueURI), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.fragment == nil, !(components.queryItems ?? []).contains(where: { $0.name == "state" })
        else { return .failure(.bad("INVALID_CONTINUE_URI")) }
        // Firebase authorizes `localhost` by default, not `127.0.0.1`: the only authorized domain here.
        guard host.lowercased() == "localhost" else {
            return .failure(.bad("UNAUTHORIZED_DOMAIN", "Domain not allowlisted by project"))
        }

        var custom: [String: String] = [:]
        for (name, value) in body["customParameter"] as? [String: Any] ?? [:] {
            guard !Self.reservedCustomParameters.contains(name) else {
                return .failure(.bad("INVALID_CUSTOM_PARAMETER", "\(name) is reserved and cannot be set"))
            }
            guard let text = value as? String else {
                return .failure(.bad("INVALID_CUSTOM_PARAMETER", "\(name) must be a string"))
            }
            custom[name] = text
        }

        var scopes = ["openid", "profile", "email"]
        let requested = (body["oauthScope"] as? String ?? "").split { $0 == " " || $0 == "," }.map(String.init)
        for scope in requested where !scopes.contains(scope) { scopes.append(scope) }

        let sessionID = (body["sessionId"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? Self.randomString(27)
        let state = "AMbdmD" + Self.randomString(120)
        let pairs =
            [
                ("client_id", self.configuration.azureClientID), ("response_type", "code"),
                ("redirect_uri", continueURI), ("scope", scopes.joined(separator: " ")), ("state", state),
            ] + custom.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        // Spaces as %20 (not `+`), so URLComponents reads the scope back as sent.
        let query = pairs.map { "\($0.0)=\(FakeIdentityForm.encodeComponent($0.1))" }.joined(separator: "&")
            .replacingOccurrences(of: "+", with: "%20")
        let authURI = "\(baseURL)\(FakeFirebaseEndpoints.authorizePath)?\(query)"

        data.sessions.append(
            FakeFirebaseSession(
                sessionID: sessionID, state: state, continueURI: continueURI, providerID: providerID, scopes: scopes,
                customParameters: custom, authURI: authURI))
        data.authURIs.append(authURI)
        return .success([
            "kind": "identitytoolkit#CreateAuthUriResponse", "authUri": authURI, "providerId": providerID,
            "sessionId": sessionID,
        ])
    }
}

/// `GET /microsoft/authorize`: the fake Microsoft sign-in page, which signs the configured Microsoft user in at
/// once and redirects to the `redirect_uri` (the createAuthUri `continueUri`).
extension FakeFirebaseOperations {
    /// The answer to an authorization request:
    /// - `client_id` not the Azure app's → 400 page `AADSTS700016`; no `redirect_uri` → 400 page `AADSTS900144`;
    /// - `response_type` not `code` → 302 with `error=unsupported_response_type`;
    /// - else the outcome (`setAuthorizeOutcome(_:)`): `.signIn` → 302 `<redirect_uri>?code=CODE&state=STATE`
    ///   (single-use code for the Microsoft user and the request's `scope`); `.error` → 302 with `error`,
    ///   `error_description`, `state`; `.wrongState` → a code under `state=<state>-tampered`.
    func authorize(_ query: [String: String], data: inout FakeFirebaseData) -> FakeFirebaseResponse {
        guard query["client_id"] == self.configuration.azureClientID else {
            return Self.page(
                "AADSTS700016: Application with identifier '\(query["client_id"] ?? "")' was not found in the "
                    + "directory.")
        }
        guard let redirectURI = query["redirect_uri"], !redirectURI.isEmpty else {
            return Self.page("AADSTS900144: The request body must contain the following parameter: 'redirect_uri'.")
        }
        let state = query["state"] ?? ""
        guard query["response_type"] == "code" else {
            return .redirect(
                to: Self.append(
                    [
                        ("error", "unsupported_response_type"),
                        (
                            "error_description",
                            "AADSTS700054: response_type '\(query["response_type"] ?? "")' is "
                                + "not enabled for the application."
                        ), ("state", state),
                    ], to: redirectURI))
        }
        switch data.authorizeOutcome {
        case .error(let error, let description):
            return .redirect(
                to: Self.append(
                    [("error", error), ("error_description", description), ("state", state)], to: redirectURI))
        case .signIn, .wrongState:
            let code = "0.A" + Self.randomString(60)
            let scopes = (query["scope"] ?? "").split(separator: " ").map(String.init)
            data.codes[code] = FakeFirebaseAuthorizationCode(
                state: state, redirectURI: redirectURI, user: data.microsoftUser, scopes: scopes)
            let returnedState = data.authorizeOutcome == .wrongState ? state + "-tampered" : state
            return .redirect(to: Self.append([("code", code), ("state", returnedState)], to: redirectURI))
        }
    }

    /// Whether two URLs name the same endpoint: scheme, host (case-insensitive), port and path; the query is
    /// ignored.
    static func sameRedirect(_ lhs: String, _ rhs: String) -> Bool {
        guard let left = URLComponents(string: lhs), let right = URLComponents(string: rhs) else { return false }
        return left.scheme?.lowercased() == right.scheme?.lowercased()
            && left.host?.lowercased() == right.host?.lowercased() && left.port == right.port
            && (left.path.isEmpty ? "/" : left.path)
                == (right.path.isEmpty ? "/" : right.path)
    }

    /// `url` with `pairs` appended to its query.
    static func append(_ pairs: [(String, String)], to url: String) -> String {
        url + (url.contains("?") ? "&" : "?") + FakeIdentityForm.encode(pairs)
    }

    /// Microsoft's error page (400).
    private static func page(_ message: String) -> FakeFirebaseResponse {
        let escaped = message.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        return .html(
            status: 400,
            "<html><body><h1>Sorry, but we're having trouble signing you in.</h1><p>\(escaped)</p></body></html>")
    }
}

/// The fake Microsoft side of a sign-in: the identity a redeemed code establishes, with a Graph access token,
/// a Microsoft ID token and Graph-`/me`-shaped `rawUserInfo`.
extension FakeFirebaseOperations {
    /// Scopes that are not Graph permissions (left out of the Graph token's `scp`).
    static let oidcScopes: Set<String> = ["openid", "profile", "email", "offline_access"]

    /// The identity `user` signing in with `scopes` establishes for `microsoft.com`.
    ///
    /// - `oauthAccessToken`: HS256 (`FakeFirebaseJWT.microsoftKey`) with `aud` `https://graph.microsoft.com`,
    ///   `iss` `https://sts.windows.net/<tid>/`, `scp` (the Graph scopes requested, space-separated, or
    ///   `User.Read` when none), `oid`, `tid`, `appid`, `name`, `upn`, `iat`/`nbf`, `exp` = now + `oauthExpireIn`.
    /// - `oauthIdToken`: HS256 with `aud` = the Azure client id, `iss` `https://login.microsoftonline.com/<tid>/v2.0`,
    ///   `oid`, `tid`, `sub` (pairwise: not the `oid`), `preferred_username`, `name`, `email`, `iat`/`nbf`, `exp`
    ///   = now + 3600.
    func microsoftIdentity(
        _ user: FakeFirebase.MicrosoftUser, scopes: [String], oauthExpireIn: FakeFirebase.OAuthExpireIn, now: Date
    ) -> FakeFirebaseFederatedIdentity {
        let issuedAt = Self.seconds(now)
        let graphScopes = scopes.filter { !Self.oidcScopes.contains($0) }
        let access: [String: Any] = [
            "aud": "https://graph.microsoft.com", "iss": "https://sts.windows.net/\(user.tid)/", "iat": issuedAt,
            "nbf": issuedAt, "exp": issuedAt + oauthExpireIn.seconds,
            "scp": graphScopes.isEmpty ? "User.Read" : graphScopes.joined(separator: " "), "oid": user.oid,
            "tid": user.tid, "appid": self.configuration.azureClientID, "name": user.name,
            "upn": user.preferredUsername, "sub": "graph-" + user.sub, "ver": "1.0",
        ]
        var id: [String: Any] = [
            "aud": self.configuration.azureClientID, "iss": "https://login.microsoftonline.com/\(user.tid)/v2.0",
            "iat": issuedAt, "nbf": issuedAt, "exp": issuedAt + 3600, "oid": user.oid, "tid": user.tid,
            "sub": user.sub, "preferred_username": user.preferredUsername, "name": user.name, "ver": "2.0",
        ]
        if let email = user.email { id["email"] = email }
        let names = user.name.split(separator: " ", maxSplits: 1).map(String.init)
        let rawUserInfo: [String: Any] = [
            "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
            "id": user.federatedID, "displayName": user.name, "givenName": names.first ?? user.name,
            "surname": names.count > 1 ? names[1] : NSNull(), "mail": user.email ?? NSNull(),
            "userPrincipalName": user.preferredUsername, "businessPhones": [Any](),
        ]
        return FakeFirebaseFederatedIdentity(
            providerID: "microsoft.com", federatedID: user.federatedID, email: user.email,
            emailVerified: user.emailVerified, displayName: user.name,
            rawUserInfo: String(decoding: FakeIdentityJWT.json(rawUserInfo), as: UTF8.self),
            oauthAccessToken: FakeFirebaseJWT.mint(
                claims: access, key: FakeFirebaseJWT.microsoftKey, keyID: FakeFirebaseJWT.microsoftKeyID),
            oauthIdToken: FakeFirebaseJWT.mint(
                claims: id, key: FakeFirebaseJWT.microsoftKey, keyID: FakeFirebaseJWT.microsoftKeyID),
            reportsExpireIn: true)
    }
}
