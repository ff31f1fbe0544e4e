import Foundation

/// `GET /microsoft/authorize`: the fake Microsoft sign-in page, which signs the configured Microsoft user in at
/// once and redirects to the `redirect_uri` (the createAuthUri `continueUri`).
extension FakeFirebaseOperations {
    /// The answer to an authorization request:
    /// - `client_id` not the Azure app's → 400 page `AADSTS700016`; no `redirect_uri` → 400 page `AADSTS900144`;
    ///   a `redirect_uri` not registered (when `registeredRedirectURIs` is set; the port is ignored for
    ///   `localhost`) → 400 page `AADSTS50011`;
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
        if let registered = data.registeredRedirectURIs,
            !registered.contains(where: { Self.sameRedirect(redirectURI, $0, ignoringLocalhostPort: true) })
        {
            return Self.page(
                "AADSTS50011: The redirect URI '\(redirectURI)' specified in the request does not match the redirect "
                    + "URIs configured for the application '\(self.configuration.azureClientID)'.")
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
    /// ignored. With `ignoringLocalhostPort`, `localhost` URLs match on any port (Entra's loopback rule).
    static func sameRedirect(_ lhs: String, _ rhs: String, ignoringLocalhostPort: Bool = false) -> Bool {
        guard let left = URLComponents(string: lhs), let right = URLComponents(string: rhs) else { return false }
        let leftHost = left.host?.lowercased()
        let ignorePort = ignoringLocalhostPort && leftHost == "localhost"
        return left.scheme?.lowercased() == right.scheme?.lowercased() && leftHost == right.host?.lowercased()
            && (ignorePort || left.port == right.port)
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
