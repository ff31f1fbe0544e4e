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
        guard data.microsoftEnabled else {
            return .failure(.bad("OPERATION_NOT_ALLOWED", "The identity provider configuration is disabled."))
        }
        guard let continueURI = body["continueUri"] as? String, !continueURI.isEmpty else {
            return .failure(.bad("MISSING_CONTINUE_URI"))
        }
        guard let components = URLComponents(string: continueURI), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.fragment == nil, !(components.queryItems ?? []).contains(where: { $0.name == "state" })
        else { return .failure(.bad("INVALID_CONTINUE_URI")) }
        guard data.authorizedDomains.contains(where: { $0.lowercased() == host.lowercased() }) else {
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
