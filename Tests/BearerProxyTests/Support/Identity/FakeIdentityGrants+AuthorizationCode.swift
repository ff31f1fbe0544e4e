import Crypto
import Foundation

/// The authorization code grant with PKCE and a loopback redirect (what a CLI does): the authorization endpoint
/// and the token endpoint's `authorization_code` redemption.
extension FakeIdentityGrants {
    /// What the authorization endpoint answers.
    enum AuthorizeAnswer: Sendable {
        /// `302` to this `Location`.
        case redirect(String)
        /// An error page with this status (a request that cannot be sent back to the client).
        case page(status: Int, message: String)
    }

    /// `GET …/authorize`: checks the client, the loopback `redirect_uri`, `response_type=code`, `scope` and PKCE
    /// (S256), then plays `data.authorizeOutcome` for the browser user.
    func authorize(_ query: [String: String], data: inout FakeIdentityData, now: Date) -> AuthorizeAnswer {
        guard let clientID = query["client_id"], let client = self.clients[clientID] else {
            return .page(
                status: 400,
                message: "AADSTS700016: Application with identifier '\(query["client_id"] ?? "")' was not found.")
        }
        guard let redirectURI = query["redirect_uri"] else {
            return .page(status: 400, message: "AADSTS900144: The request must contain the parameter 'redirect_uri'.")
        }
        guard Self.isLoopback(redirectURI) else {
            return .page(
                status: 400,
                message:
                    "AADSTS50011: The redirect URI '\(redirectURI)' does not match the redirect URIs configured for the application (http://127.0.0.1 or http://localhost, any port)."
            )
        }
        let state = query["state"]
        func fail(_ error: String, _ description: String) -> AuthorizeAnswer {
            .redirect(Self.location(redirectURI, [("error", error), ("error_description", description)], state: state))
        }
        guard let responseType = query["response_type"] else {
            return fail("invalid_request", "AADSTS900144: The request must contain the parameter 'response_type'.")
        }
        guard responseType == "code" else {
            return fail("unsupported_response_type", "AADSTS700054: response_type '\(responseType)' is not enabled.")
        }
        guard let scope = query["scope"], !scope.trimmingCharacters(in: .whitespaces).isEmpty else {
            return fail("invalid_request", "AADSTS900144: The request must contain the parameter 'scope'.")
        }
        guard let challenge = query["code_challenge"], !challenge.isEmpty else {
            return fail("invalid_request", "AADSTS9002325: Proof Key for Code Exchange is required (code_challenge).")
        }
        guard query["code_challenge_method"] == "S256" else {
            return fail("invalid_request", "AADSTS5002737: code_challenge_method must be 'S256'.")
        }
        switch data.authorizeOutcome {
        case .error(let error, let description):
            return fail(error, description)
        case .signIn, .wrongState:
            let code = Self.randomToken("FakeAC.")
            data.authorizationCodes[code] = FakeIdentityAuthorizationCode(
                user: data.browserUser, clientID: client.id, redirectURI: redirectURI, codeChallenge: challenge,
                scope: scope, nonce: query["nonce"], expiresAt: now.addingTimeInterval(600))
            let returnedState =
                data.authorizeOutcome == .wrongState ? (state.map { $0 + "-tampered" } ?? "tampered") : state
            return .redirect(Self.location(redirectURI, [("code", code)], state: returnedState))
        }
    }

    /// The token endpoint's `authorization_code` grant (`code`, `redirect_uri`, `code_verifier`, `scope`).
    func authorizationCodeGrant(
        _ request: FakeIdentityTokenRequest, client: FakeIdentityProvider.Client, record: inout RecordedTokenRequest,
        data: inout FakeIdentityData, now: Date
    ) -> Result<[String: Any], FakeIdentityError> {
        guard let code = request.parameters["code"], !code.isEmpty else { return .failure(.missingParameter("code")) }
        guard var entry = data.authorizationCodes[code] else {
            return .failure(.invalidGrant(54005, "The authorization code is unknown."))
        }
        guard !entry.redeemed else { return .failure(.invalidGrant(54005)) }
        guard entry.clientID == client.id else {
            return .failure(.invalidGrant(70000, "The authorization code was issued to a different client."))
        }
        guard now < entry.expiresAt else { return .failure(.invalidGrant(70008)) }
        guard let redirectURI = request.parameters["redirect_uri"] else {
            return .failure(.missingParameter("redirect_uri"))
        }
        guard redirectURI == entry.redirectURI else { return .failure(.invalidGrant(500112)) }
        guard let verifier = request.parameters["code_verifier"] else {
            return .failure(.missingParameter("code_verifier"))
        }
        guard Self.isValidVerifier(verifier) else {
            return .failure(
                .invalidGrant(501481, "The code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~."))
        }
        guard Self.codeChallenge(for: verifier) == entry.codeChallenge else { return .failure(.invalidGrant(501481)) }
        let scopes: FakeIdentityScopes
        switch self.userScopes(request.parameters["scope"] ?? entry.scope) {
        case .success(let parsed): scopes = parsed
        case .failure(let error): return .failure(error)
        }
        entry.redeemed = true
        data.authorizationCodes[code] = entry
        return .success(
            self.userTokenResponse(
                for: entry.user, client: client, scopes: scopes, issuer: request.issuer,
                clientInfo: Self.wantsClientInfo(request), nonce: entry.nonce, record: &record, data: &data, now: now))
    }

    /// The S256 `code_challenge` of a verifier: unpadded base64url of its SHA-256 (RFC 7636 §4.2).
    static func codeChallenge(for verifier: String) -> String {
        FakeIdentityJWT.base64URL(SHA256.hash(data: Array(verifier.utf8)))
    }

    /// Whether `verifier` is 43–128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
    static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"):
                    return true
                default:
                    return false
                }
            }
    }

    /// Whether `uri` is a loopback redirect Entra accepts for a public client: `http`, host `127.0.0.1` or
    /// `localhost`, any port (Entra ignores the port of loopback URIs), no fragment.
    static func isLoopback(_ uri: String) -> Bool {
        guard let components = URLComponents(string: uri), components.scheme?.lowercased() == "http",
            let host = components.host?.lowercased(), host == "127.0.0.1" || host == "localhost",
            components.fragment == nil
        else { return false }
        return true
    }

    /// `redirectURI` with `parameters` (and `state`, if any) appended to its query (`?`, or `&` if it has one);
    /// spaces as `%20`.
    static func location(_ redirectURI: String, _ parameters: [(String, String)], state: String?) -> String {
        var pairs = parameters
        if let state { pairs.append(("state", state)) }
        let query = FakeIdentityForm.encode(pairs).replacingOccurrences(of: "+", with: "%20")
        return redirectURI + (redirectURI.contains("?") ? "&" : "?") + query
    }
}
