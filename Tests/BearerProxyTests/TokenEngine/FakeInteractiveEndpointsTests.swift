import Foundation
import Testing

/// Keeps the fake identity provider's interactive endpoints honest: native authentication, the device
/// authorization grant, authorization code + PKCE and revocation, driven with plain HTTP.
@Suite("Fake identity provider: interactive endpoints")
struct FakeInteractiveEndpointsTests {
    typealias User = FakeIdentityProvider.User

    static let clientID = FakeIdentityProvider.Client.publicClientID
    static let apiScope = "api://todo/ToDoList.Read"
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"
    static let loopback = "http://127.0.0.1:53123/callback"

    // MARK: - Helpers

    /// POSTs a form to `path` and returns the status and the JSON body (empty if there is none).
    static func post(_ idp: FakeIdentityProvider, _ path: String, _ form: [(String, String)]) async throws
        -> (status: Int, json: [String: Any])
    {
        let response = try await TestClient.send(
            port: idp.port, method: "POST", uri: path,
            headers: [("content-type", "application/x-www-form-urlencoded")],
            body: .text(FakeIdentityForm.encode(form)))
        return (Int(response.status.code), response.body.isEmpty ? [:] : try response.jsonObject())
    }

    static func initiate(_ idp: FakeIdentityProvider, _ username: String, challengeTypes: String) async throws
        -> (status: Int, json: [String: Any])
    {
        try await self.post(
            idp, "/contoso/oauth2/v2.0/initiate",
            [
                ("client_id", self.clientID), ("username", username), ("challenge_type", challengeTypes),
                ("capabilities", "mfa_required registration_required"),
            ])
    }

    static func challenge(_ idp: FakeIdentityProvider, _ token: String, challengeTypes: String) async throws
        -> (status: Int, json: [String: Any])
    {
        try await self.post(
            idp, "/contoso/oauth2/v2.0/challenge",
            [("client_id", self.clientID), ("continuation_token", token), ("challenge_type", challengeTypes)])
    }

    static func token(
        _ idp: FakeIdentityProvider, _ form: [(String, String)], path: String = "/contoso/oauth2/v2.0/token"
    )
        async throws -> (status: Int, json: [String: Any])
    {
        try await self.post(idp, path, [("client_id", self.clientID)] + form)
    }

    /// initiate + challenge for a password user; returns the continuation token for the password grant.
    static func passwordContinuation(_ idp: FakeIdentityProvider, _ user: User = .alice) async throws -> String {
        let types = "password redirect"
        let started = try await self.initiate(idp, user.preferredUsername, challengeTypes: types)
        let first = try #require(started.json["continuation_token"] as? String)
        let challenged = try await self.challenge(idp, first, challengeTypes: types)
        #expect(challenged.json["challenge_type"] as? String == "password")
        return try #require(challenged.json["continuation_token"] as? String)
    }

    static func passwordGrant(_ idp: FakeIdentityProvider, _ token: String, _ password: String) async throws
        -> (status: Int, json: [String: Any])
    {
        try await self.token(
            idp,
            [
                ("grant_type", "password"), ("continuation_token", token), ("username", User.alice.preferredUsername),
                ("password", password), ("scope", "\(self.apiScope) openid profile offline_access"),
                ("client_info", "true"), ("challenge_type", "password redirect"),
            ])
    }

    /// `GET /contoso/oauth2/v2.0/authorize` with `query`; returns the status and the `Location` query items.
    static func authorize(_ idp: FakeIdentityProvider, _ query: [(String, String)]) async throws
        -> (status: Int, location: String?, items: [String: String])
    {
        let response = try await TestClient.send(
            port: idp.port, uri: "/contoso/oauth2/v2.0/authorize?" + FakeIdentityForm.encode(query))
        let location = response.header("location")
        var items: [String: String] = [:]
        for item in location.flatMap({ URLComponents(string: $0)?.queryItems }) ?? [] {
            items[item.name] = item.value ?? ""
        }
        return (Int(response.status.code), location, items)
    }

    static func authorizeQuery(redirectURI: String = loopback, omitting: String? = nil) -> [(String, String)] {
        [
            ("client_id", clientID), ("response_type", "code"), ("redirect_uri", redirectURI),
            ("response_mode", "query"), ("scope", "openid offline_access \(apiScope)"), ("state", "S-123"),
            ("nonce", "N-456"), ("code_challenge", FakeIdentityProvider.codeChallenge(for: verifier)),
            ("code_challenge_method", "S256"),
        ].filter { $0.0 != omitting }
    }

    static func redeem(_ idp: FakeIdentityProvider, code: String, verifier: String, redirectURI: String = loopback)
        async throws -> (status: Int, json: [String: Any])
    {
        try await self.token(
            idp,
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                ("code_verifier", verifier), ("scope", "\(apiScope) openid offline_access"),
            ])
    }

    static func poll(_ idp: FakeIdentityProvider, _ deviceCode: String) async throws
        -> (status: Int, json: [String: Any])
    {
        try await self.token(
            idp, [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode)])
    }

    // MARK: - Native authentication

    @Test("native password sign-in: initiate → challenge → password grant issues the refresh grant's tokens")
    func nativePasswordSuccess() async throws {
        try await withIdentityProvider { idp in
            let token = try await Self.passwordContinuation(idp)
            let answer = try await Self.passwordGrant(idp, token, User.alicePassword)
            #expect(answer.status == 200)
            #expect(answer.json["scope"] as? String == Self.apiScope)
            #expect(answer.json["expires_in"] as? Int == 3599)
            let access = try #require(answer.json["access_token"] as? String)
            #expect(FakeIdentityProvider.claims(ofAccessToken: access)?["aud"] as? String == "api://todo")
            let idToken = try #require(answer.json["id_token"] as? String)
            let claims = try #require(FakeIdentityProvider.claims(ofIDToken: idToken))
            #expect(claims["preferred_username"] as? String == User.alice.preferredUsername)
            let clientInfo = try #require(answer.json["client_info"] as? String)
            #expect(FakeIdentityProvider.decodeClientInfo(clientInfo)?["uid"] == User.alice.oid)
            #expect(idp.isRefreshTokenValid(try #require(answer.json["refresh_token"] as? String)))

            let requests = idp.nativeRequests
            #expect(requests.map(\.endpoint) == [.initiate, .challenge, .token])
            #expect(requests.allSatisfy { $0.offeredChallengeTypes.contains("redirect") })
            #expect(requests[2].parameters["continuation_token"] == requests[1].issuedContinuationToken)
            #expect(requests[2].parameters["password"] == "<redacted>")
            // The flow is used up.
            let again = try await Self.passwordGrant(idp, token, User.alicePassword)
            #expect(again.json["error"] as? String == "invalid_grant")
        }
    }

    @Test("wrong password: invalid_grant 50126, the same continuation token still works; stale tokens do not")
    func nativeWrongPassword() async throws {
        try await withIdentityProvider { idp in
            let started = try await Self.initiate(idp, "ALICE@contoso.example", challengeTypes: "password redirect")
            let first = try #require(started.json["continuation_token"] as? String)
            let challenged = try await Self.challenge(idp, first, challengeTypes: "password redirect")
            let token = try #require(challenged.json["continuation_token"] as? String)

            let wrong = try await Self.passwordGrant(idp, token, "Tr0ub4dor&3")
            #expect(wrong.status == 400)
            #expect(wrong.json["error"] as? String == "invalid_grant")
            #expect(wrong.json["error_codes"] as? [Int] == [50126])

            let stale = try await Self.passwordGrant(idp, first, User.alicePassword)
            #expect(stale.json["error"] as? String == "invalid_grant")
            let retried = try await Self.passwordGrant(idp, token, User.alicePassword)
            #expect(retried.status == 200)
            #expect(retried.json["access_token"] is String)
        }
    }

    @Test("email OTP: an 8-digit code is sent; a resend invalidates the old one (invalid_oob_value), the new works")
    func nativeOneTimeCode() async throws {
        try await withIdentityProvider { idp in
            let types = "oob redirect"
            let started = try await Self.initiate(idp, User.bob.preferredUsername, challengeTypes: types)
            let first = try #require(started.json["continuation_token"] as? String)
            let challenged = try await Self.challenge(idp, first, challengeTypes: types)
            #expect(challenged.status == 200)
            #expect(challenged.json["challenge_type"] as? String == "oob")
            #expect(challenged.json["binding_method"] as? String == "prompt")
            #expect(challenged.json["challenge_channel"] as? String == "email")
            #expect(challenged.json["challenge_target_label"] as? String == "b***b@co*****.example")
            #expect(challenged.json["code_length"] as? Int == 8)
            let oldCode = try #require(idp.lastOneTimeCode(for: .bob))
            #expect(oldCode.count == 8 && oldCode.allSatisfy(\.isNumber))

            let second = try #require(challenged.json["continuation_token"] as? String)
            let resent = try await Self.challenge(idp, second, challengeTypes: types)
            let latest = try #require(resent.json["continuation_token"] as? String)
            #expect(idp.oneTimeCodesSent(to: .bob) == 2)
            let newCode = try #require(idp.lastOneTimeCode(for: .bob))
            #expect(newCode != oldCode)

            let oobForm = { (code: String) in
                [
                    ("grant_type", "oob"), ("continuation_token", latest), ("oob", code),
                    ("scope", "openid offline_access"),
                ]
            }
            let rejected = try await Self.token(idp, oobForm(oldCode))
            #expect(rejected.status == 400)
            #expect(rejected.json["error"] as? String == "invalid_grant")
            #expect(rejected.json["suberror"] as? String == "invalid_oob_value")
            #expect(rejected.json["continuation_token"] as? String == latest)
            let accepted = try await Self.token(idp, oobForm(newCode))
            #expect(accepted.status == 200)
            #expect(accepted.json["scope"] as? String == "openid")
            let idToken = try #require(accepted.json["id_token"] as? String)
            #expect(FakeIdentityProvider.claims(ofIDToken: idToken)?["oid"] as? String == User.bob.oid)
        }
    }

    @Test("initiate: HTTP 200 redirect when the user's method is not offered, and the Entra errors")
    func nativeInitiateAnswers() async throws {
        try await withIdentityProvider { idp in
            let alice = try await Self.initiate(idp, User.alice.preferredUsername, challengeTypes: "oob redirect")
            #expect(alice.status == 200)
            #expect(alice.json["challenge_type"] as? String == "redirect")
            #expect(alice.json["redirect_reason"] is String)
            #expect(alice.json["continuation_token"] == nil)
            let bob = try await Self.initiate(idp, User.bob.preferredUsername, challengeTypes: "password redirect")
            #expect(bob.json["challenge_type"] as? String == "redirect")

            let noRedirect = try await Self.initiate(idp, User.alice.preferredUsername, challengeTypes: "password")
            #expect(noRedirect.status == 400)
            #expect(noRedirect.json["error"] as? String == "unsupported_challenge_type")
            let unknown = try await Self.initiate(idp, "mallory@contoso.example", challengeTypes: "password redirect")
            #expect(unknown.json["error"] as? String == "user_not_found")
            let disabled = try await Self.post(
                idp, "/contoso/oauth2/v2.0/initiate",
                [
                    ("client_id", FakeIdentityProvider.Client.confidentialClientID),
                    ("username", User.alice.preferredUsername), ("challenge_type", "password redirect"),
                ])
            #expect(disabled.status == 400)
            #expect(disabled.json["error"] as? String == "invalid_client")
            #expect(disabled.json["suberror"] as? String == "nativeauthapi_disabled")

            idp.enqueue(.unavailable, at: .initiate)
            let injected = try await Self.initiate(
                idp, User.alice.preferredUsername, challengeTypes: "password redirect")
            #expect(injected.status == 503)
            #expect(idp.nativeRequests.last?.status == 503)
        }
    }

    @Test("continuation tokens expire (expired_token 552003); MFA stops the sign-in with mfa_required")
    func nativeExpiryAndMFA() async throws {
        try await withIdentityProvider { idp in
            let token = try await Self.passwordContinuation(idp)
            idp.expireContinuationTokens()
            let expired = try await Self.passwordGrant(idp, token, User.alicePassword)
            #expect(expired.status == 400)
            #expect(expired.json["error"] as? String == "expired_token")
            #expect(expired.json["error_codes"] as? [Int] == [552003])

            idp.setMFARequired(for: .alice)
            let fresh = try await Self.passwordContinuation(idp)
            let mfa = try await Self.passwordGrant(idp, fresh, User.alicePassword)
            #expect(mfa.status == 400)
            #expect(mfa.json["error"] as? String == "invalid_grant")
            #expect(mfa.json["suberror"] as? String == "mfa_required")
            #expect(mfa.json["continuation_token"] is String)
            idp.setMFARequired(false, for: .alice)
            idp.setPasswordResetRequired(for: .alice)
            let reset = try await Self.passwordGrant(idp, try await Self.passwordContinuation(idp), User.alicePassword)
            #expect(reset.json["error"] as? String == "invalid_request")
            #expect(reset.json["error_codes"] as? [Int] == [50142])
        }
    }

    // MARK: - Device code

    @Test("device code: authorization_pending until approved, then tokens once; bad_verification_code afterwards")
    func deviceApproved() async throws {
        try await withIdentityProvider { idp in
            let issued = try await Self.post(
                idp, "/oidc/devicecode",
                [("client_id", Self.clientID), ("scope", "\(Self.apiScope) openid offline_access")])
            #expect(issued.status == 200)
            let userCode = try #require(issued.json["user_code"] as? String)
            let deviceCode = try #require(issued.json["device_code"] as? String)
            let uri = "\(idp.baseURL)/contoso/devicelogin"
            #expect(issued.json["verification_uri"] as? String == uri)
            #expect(issued.json["expires_in"] as? Int == 900)
            #expect(issued.json["interval"] as? Int == 5)
            #expect(
                issued.json["message"] as? String
                    == "To sign in, use a web browser to open the page \(uri) and enter the code \(userCode) to authenticate."
            )
            #expect(userCode.count == 8)
            #expect(idp.lastDeviceAuthorization?.userCode == userCode)

            let pending = try await Self.poll(idp, deviceCode)
            #expect(pending.status == 400)
            #expect(pending.json["error"] as? String == "authorization_pending")
            #expect(pending.json["error_codes"] as? [Int] == [70016])
            #expect(idp.approveDeviceCode(userCode: userCode, as: .bob))
            let granted = try await Self.poll(idp, deviceCode)
            #expect(granted.status == 200)
            #expect(granted.json["scope"] as? String == Self.apiScope)
            #expect(granted.json["refresh_token"] is String)
            let idToken = try #require(granted.json["id_token"] as? String)
            #expect(FakeIdentityProvider.claims(ofIDToken: idToken)?["oid"] as? String == User.bob.oid)
            let again = try await Self.poll(idp, deviceCode)
            #expect(again.json["error"] as? String == "bad_verification_code")
            #expect(again.json["error_codes"] as? [Int] == [70018])
            #expect(idp.devicePollCount == 3)
        }
    }

    @Test("device code: scripted slow_down, declined, expired and unknown codes")
    func deviceErrors() async throws {
        try await withIdentityProvider { idp in
            func issue() async throws -> (user: String, device: String) {
                let issued = try await Self.post(
                    idp, "/contoso/oauth2/v2.0/devicecode", [("client_id", Self.clientID), ("scope", "openid profile")])
                return (
                    try #require(issued.json["user_code"] as? String),
                    try #require(issued.json["device_code"] as? String)
                )
            }
            let declined = try await issue()
            idp.enqueueDevicePoll(.slowDown)
            let slow = try await Self.poll(idp, declined.device)
            #expect(slow.status == 400)
            #expect(slow.json["error"] as? String == "slow_down")
            #expect(idp.declineDeviceCode(userCode: declined.user))
            #expect(try await Self.poll(idp, declined.device).json["error"] as? String == "authorization_declined")

            let expired = try await issue()
            #expect(idp.expireDeviceCode(userCode: expired.user))
            let answer = try await Self.poll(idp, expired.device)
            #expect(answer.json["error"] as? String == "expired_token")
            #expect(answer.json["error_codes"] as? [Int] == [70019])

            let unknown = try await Self.poll(idp, "FakeDC.never-issued")
            #expect(unknown.json["error"] as? String == "bad_verification_code")
            try await idp.waitForDeviceCodeRequests(2)
            #expect(idp.deviceCodeRequests.count == 2)
        }
    }

    // MARK: - Authorization code + PKCE

    @Test("authorize → 302 with code and state; the right verifier redeems it once, the id_token carries the nonce")
    func authorizationCodeRedeemed() async throws {
        try await withIdentityProvider { idp in
            let query = Self.authorizeQuery(redirectURI: "http://localhost:49152/cb?from=cli")
            let answer = try await Self.authorize(idp, query)
            #expect(answer.status == 302)
            #expect(answer.location?.hasPrefix("http://localhost:49152/cb?from=cli&code=") == true)
            #expect(answer.items["state"] == "S-123")
            let code = try #require(answer.items["code"])
            #expect(idp.authorizeRequests.last?["nonce"] == "N-456")

            let redeemed = try await Self.redeem(
                idp, code: code, verifier: Self.verifier, redirectURI: "http://localhost:49152/cb?from=cli")
            #expect(redeemed.status == 200)
            #expect(redeemed.json["scope"] as? String == Self.apiScope)
            let idToken = try #require(redeemed.json["id_token"] as? String)
            let claims = try #require(FakeIdentityProvider.claims(ofIDToken: idToken))
            #expect(claims["nonce"] as? String == "N-456")
            #expect(claims["oid"] as? String == User.alice.oid)
            let again = try await Self.redeem(
                idp, code: code, verifier: Self.verifier, redirectURI: "http://localhost:49152/cb?from=cli")
            #expect(again.json["error_codes"] as? [Int] == [54005])
        }
    }

    @Test("a wrong code_verifier or redirect_uri is invalid_grant (501481, 500112)")
    func authorizationCodeWrongVerifier() async throws {
        try await withIdentityProvider { idp in
            let code = try #require(try await Self.authorize(idp, Self.authorizeQuery()).items["code"])
            let wrong = try await Self.redeem(idp, code: code, verifier: String(Self.verifier.reversed()))
            #expect(wrong.status == 400)
            #expect(wrong.json["error"] as? String == "invalid_grant")
            #expect(wrong.json["error_codes"] as? [Int] == [501481])
            let elsewhere = try await Self.redeem(
                idp, code: code, verifier: Self.verifier, redirectURI: "http://127.0.0.1:1/other")
            #expect(elsewhere.json["error_codes"] as? [Int] == [500112])
        }
    }

    @Test("authorize: bad redirect_uri is a 400 page; other errors and the outcome knobs redirect with state")
    func authorizeErrorsAndOutcomes() async throws {
        try await withIdentityProvider { idp in
            let https = try await Self.authorize(idp, Self.authorizeQuery(redirectURI: "https://127.0.0.1:8443/cb"))
            #expect(https.status == 400)
            #expect(https.location == nil)
            let noPKCE = try await Self.authorize(idp, Self.authorizeQuery(omitting: "code_challenge"))
            #expect(noPKCE.status == 302)
            #expect(noPKCE.items["error"] == "invalid_request")
            #expect(noPKCE.items["state"] == "S-123")
            #expect(noPKCE.items["code"] == nil)

            idp.setAuthorizeOutcome(.error(error: "access_denied", description: "The user cancelled"))
            let denied = try await Self.authorize(idp, Self.authorizeQuery())
            #expect(denied.items["error"] == "access_denied")
            #expect(denied.items["error_description"] == "The user cancelled")
            #expect(denied.items["state"] == "S-123")
            idp.setAuthorizeOutcome(.wrongState)
            let tampered = try await Self.authorize(idp, Self.authorizeQuery())
            #expect(tampered.items["code"] != nil)
            #expect(tampered.items["state"] != "S-123")
            try await idp.waitForAuthorizeRequests(4)
        }
    }

    // MARK: - Revocation and discovery

    @Test("revocation: 200 with an empty body; the refresh grant then rejects the token")
    func revocation() async throws {
        try await withIdentityProvider { idp in
            let refreshToken = idp.issueRefreshToken(for: .alice)
            let revoked = try await Self.post(
                idp, "/oidc/revoke",
                [("token", refreshToken), ("token_type_hint", "refresh_token"), ("client_id", Self.clientID)])
            #expect(revoked.status == 200)
            #expect(revoked.json.isEmpty)
            #expect(idp.revokedTokenCount == 1)
            #expect(idp.revocations.first?.tokenTypeHint == "refresh_token")
            let refreshed = try await Self.token(
                idp, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("scope", Self.apiScope)],
                path: "/oidc/token")
            #expect(refreshed.json["error"] as? String == "invalid_grant")
            #expect(refreshed.json["error_codes"] as? [Int] == [700082])
        }
    }

    @Test("discovery documents name the interactive endpoints")
    func discovery() async throws {
        try await withIdentityProvider { idp in
            let oidc = try await TestClient.send(port: idp.port, uri: "/oidc/.well-known/openid-configuration")
            let document = try oidc.jsonObject()
            #expect(document["authorization_endpoint"] as? String == "\(idp.baseURL)/oidc/authorize")
            #expect(document["device_authorization_endpoint"] as? String == "\(idp.baseURL)/oidc/devicecode")
            #expect(document["revocation_endpoint"] as? String == "\(idp.baseURL)/oidc/revoke")
            let entra = try await TestClient.send(port: idp.port, uri: "/contoso/v2.0/.well-known/openid-configuration")
            let base = "\(idp.baseURL)/contoso/oauth2/v2.0"
            #expect(try entra.jsonObject()["authorization_endpoint"] as? String == "\(base)/authorize")
            #expect(try entra.jsonObject()["device_authorization_endpoint"] as? String == "\(base)/devicecode")
            #expect(try entra.jsonObject()["end_session_endpoint"] as? String == "\(base)/logout")
        }
    }
}
