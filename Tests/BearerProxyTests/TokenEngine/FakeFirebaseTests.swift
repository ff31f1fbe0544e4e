import Foundation
import Testing

/// Keeps the fake Firebase Auth project honest: the Microsoft code flow through createAuthUri, production's
/// checks and errors, one account per email, password sign-in and the securetoken refresh, driven with plain HTTP.
@Suite("Fake Firebase Auth")
struct FakeFirebaseTests {
    typealias Answer = (status: Int, json: [String: Any], response: TestResponse)
    typealias MicrosoftUser = FakeFirebase.MicrosoftUser

    static let callback = "http://localhost:8975/callback"

    // MARK: - Helpers

    static func withFirebase<T>(
        _ configuration: FakeFirebase.Configuration = .init(), _ body: (FakeFirebase) async throws -> T
    ) async throws -> T {
        let firebase = try await FakeFirebase.start(configuration)
        do {
            let result = try await body(firebase)
            try await firebase.shutdown()
            return result
        } catch {
            try? await firebase.shutdown()
            throw error
        }
    }

    /// POSTs a JSON body to `path` (which carries the key, if any).
    static func post(
        _ firebase: FakeFirebase, _ path: String, json: [String: Any], headers: [(String, String)] = []
    ) async throws -> Answer {
        let body = try JSONSerialization.data(withJSONObject: json)
        let response = try await TestClient.send(
            port: firebase.port, method: "POST", uri: path, headers: [("content-type", "application/json")] + headers,
            body: .bytes(Array(body)))
        return (Int(response.status.code), response.body.isEmpty ? [:] : try response.jsonObject(), response)
    }

    /// Calls `accounts:<method>` with the API key.
    static func accounts(_ firebase: FakeFirebase, _ method: String, _ json: [String: Any]) async throws -> Answer {
        try await self.post(firebase, firebase.accountsPath(method), json: json)
    }

    /// A refresh, as a form (`json: false`) or as the iOS SDK's JSON.
    static func refresh(_ firebase: FakeFirebase, _ refreshToken: String, json: Bool = false) async throws -> Answer {
        if json {
            return try await self.post(
                firebase, firebase.secureTokenPath, json: ["grantType": "refresh_token", "refreshToken": refreshToken])
        }
        let response = try await TestClient.send(
            port: firebase.port, method: "POST", uri: firebase.secureTokenPath,
            headers: [("content-type", "application/x-www-form-urlencoded")],
            body: .text(FakeIdentityForm.encode([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])))
        return (Int(response.status.code), try response.jsonObject(), response)
    }

    /// The error envelope's `message`.
    static func message(_ answer: Answer) -> String? {
        (answer.json["error"] as? [String: Any])?["message"] as? String
    }

    /// createAuthUri for microsoft.com with the SEED parameters; returns the answer.
    static func createAuthUri(
        _ firebase: FakeFirebase, continueUri: String = callback, custom: [String: Any]? = nil,
        sessionId: String? = nil
    ) async throws -> Answer {
        var body: [String: Any] = [
            "providerId": "microsoft.com", "continueUri": continueUri, "oauthScope": "User.Read Mail.Read",
            "customParameter": custom ?? [
                "tenant": "contoso.onmicrosoft.com", "prompt": "select_account", "login_hint": "alice@contoso.example",
            ],
        ]
        if let sessionId { body["sessionId"] = sessionId }
        return try await self.accounts(firebase, "createAuthUri", body)
    }

    /// The browser: GETs the `authUri` (on the fake) and returns the status and `Location`.
    static func visit(_ firebase: FakeFirebase, _ authUri: String) async throws -> (status: Int, location: String?) {
        let path = String(authUri.dropFirst(firebase.baseURL.count))
        let response = try await TestClient.send(port: firebase.port, uri: path)
        return (Int(response.status.code), response.header("location"))
    }

    /// The query items of a URL.
    static func items(_ url: String?) -> [String: String] {
        var items: [String: String] = [:]
        for item in url.flatMap({ URLComponents(string: $0)?.queryItems }) ?? [] { items[item.name] = item.value ?? "" }
        return items
    }

    /// createAuthUri → Microsoft page; returns the callback URL the browser lands on and the session id.
    static func browserCallback(_ firebase: FakeFirebase) async throws -> (requestUri: String, sessionId: String) {
        let started = try await self.createAuthUri(firebase)
        let authUri = try #require(started.json["authUri"] as? String)
        let visit = try await self.visit(firebase, authUri)
        #expect(visit.status == 302)
        return (try #require(visit.location), try #require(started.json["sessionId"] as? String))
    }

    static func signInWithIdp(
        _ firebase: FakeFirebase, requestUri: String, sessionId: String? = nil, extra: [String: Any] = [:]
    ) async throws -> Answer {
        var body: [String: Any] = ["requestUri": requestUri, "returnSecureToken": true, "returnIdpCredential": true]
        if let sessionId { body["sessionId"] = sessionId }
        return try await self.accounts(firebase, "signInWithIdp", body.merging(extra) { _, new in new })
    }

    /// The whole browser sign-in with Microsoft.
    static func signInWithMicrosoft(_ firebase: FakeFirebase) async throws -> Answer {
        let callback = try await self.browserCallback(firebase)
        return try await self.signInWithIdp(firebase, requestUri: callback.requestUri, sessionId: callback.sessionId)
    }

    static func signInWithPassword(_ firebase: FakeFirebase, _ email: String?, _ password: String?) async throws
        -> Answer
    {
        var body: [String: Any] = ["returnSecureToken": true]
        if let email { body["email"] = email }
        if let password { body["password"] = password }
        return try await self.accounts(firebase, "signInWithPassword", body)
    }

    // MARK: - Microsoft code flow

    @Test("createAuthUri → Microsoft 302 → signInWithIdp: Firebase session plus the Microsoft credential")
    func codeFlowSignIn() async throws {
        try await Self.withFirebase { firebase in
            let started = try await Self.createAuthUri(firebase)
            #expect(started.status == 200)
            #expect(started.json["kind"] as? String == "identitytoolkit#CreateAuthUriResponse")
            #expect(started.json["providerId"] as? String == "microsoft.com")
            let sessionId = try #require(started.json["sessionId"] as? String)
            let authUri = try #require(started.json["authUri"] as? String)
            #expect(authUri.hasPrefix(firebase.authorizeURL + "?"))
            #expect(firebase.authURIs == [authUri])
            let query = Self.items(authUri)
            #expect(query["client_id"] == FakeFirebase.defaultAzureClientID)
            #expect(query["response_type"] == "code")
            #expect(query["redirect_uri"] == Self.callback)
            #expect(query["scope"] == "openid profile email User.Read Mail.Read")
            #expect(query["tenant"] == "contoso.onmicrosoft.com")
            let state = try #require(query["state"])

            let visit = try await Self.visit(firebase, authUri)
            #expect(visit.status == 302)
            let location = try #require(visit.location)
            #expect(location.hasPrefix(Self.callback + "?"))
            #expect(Self.items(location)["state"] == state)
            #expect(Self.items(location)["code"]?.isEmpty == false)
            let page = try #require(firebase.authorizeRequests.first)
            #expect(page["tenant"] == "contoso.onmicrosoft.com")
            #expect(page["prompt"] == "select_account")
            #expect(page["login_hint"] == "alice@contoso.example")

            let answer = try await Self.signInWithIdp(firebase, requestUri: location, sessionId: sessionId)
            #expect(answer.status == 200)
            #expect(answer.json["kind"] as? String == "identitytoolkit#VerifyAssertionResponse")
            #expect(answer.json["expiresIn"] as? String == "3600")
            #expect(answer.json["oauthExpireIn"] as? Int == 3599)
            #expect(answer.json["isNewUser"] as? Bool == true)
            #expect(answer.json["federatedId"] as? String == MicrosoftUser.alice.oid)
            #expect(answer.json["email"] as? String == "alice@contoso.example")
            #expect(answer.json["refreshToken"] is String)
            let rawUserInfo = try #require(answer.json["rawUserInfo"] as? String)
            #expect(FakeIdentityJWT.object(Array(rawUserInfo.utf8))?["userPrincipalName"] as? String != nil)
            let localId = try #require(answer.json["localId"] as? String)

            let idToken = try #require(answer.json["idToken"] as? String)
            #expect(firebase.verifyIDToken(idToken) == localId)
            let claims = try #require(FakeFirebase.claims(ofIDToken: idToken))
            #expect(claims["iss"] as? String == "https://securetoken.google.com/\(FakeFirebase.defaultProjectID)")
            #expect(claims["aud"] as? String == FakeFirebase.defaultProjectID)
            #expect(claims["user_id"] as? String == localId)
            let firebaseClaim = try #require(claims["firebase"] as? [String: Any])
            #expect(firebaseClaim["sign_in_provider"] as? String == "microsoft.com")
            let identities = try #require(firebaseClaim["identities"] as? [String: Any])
            #expect(identities["microsoft.com"] as? [String] == [MicrosoftUser.alice.oid])

            let msIDToken = try #require(answer.json["oauthIdToken"] as? String)
            let msClaims = try #require(FakeFirebase.claims(ofMicrosoftToken: msIDToken))
            #expect(msClaims["oid"] as? String == MicrosoftUser.alice.oid)
            #expect(msClaims["tid"] as? String == MicrosoftUser.alice.tid)
            #expect(msClaims["sub"] as? String != msClaims["oid"] as? String)
            let graphToken = try #require(answer.json["oauthAccessToken"] as? String)
            #expect(firebase.verifyGraphAccessToken(graphToken) == MicrosoftUser.alice.oid)
            #expect(FakeFirebase.claims(ofMicrosoftToken: graphToken)?["scp"] as? String == "User.Read Mail.Read")

            // A second browser sign-in finds the same account.
            let again = try await Self.signInWithMicrosoft(firebase)
            #expect(again.json["localId"] as? String == localId)
            #expect(again.json["isNewUser"] as? Bool == false)
            #expect(firebase.signInWithIdpRequests.map(\.status) == [200, 200])
            let recorded = try #require(firebase.signInWithIdpRequests.first)
            #expect(recorded["sessionId"] == sessionId)
            #expect(recorded["requestUri"] == location)
            #expect(recorded["returnIdpCredential"] == "true")
            #expect(recorded.localID == localId)
        }
    }

    @Test("INVALID_IDP_RESPONSE for a reused code, another session, a tampered state; access_denied; redirect URIs")
    func callbackChecks() async throws {
        try await Self.withFirebase { firebase in
            let callback = try await Self.browserCallback(firebase)
            let first = try await Self.signInWithIdp(
                firebase, requestUri: callback.requestUri, sessionId: callback.sessionId)
            #expect(first.status == 200)
            let reused = try await Self.signInWithIdp(
                firebase, requestUri: callback.requestUri, sessionId: callback.sessionId)
            #expect(reused.status == 400)
            #expect(Self.message(reused)?.hasPrefix("INVALID_IDP_RESPONSE : ") == true)
            let error = try #require(reused.json["error"] as? [String: Any])
            #expect(error["code"] as? Int == 400)
            #expect(error["status"] == nil)
            let item = try #require((error["errors"] as? [[String: Any]])?.first)
            #expect(item["message"] as? String == Self.message(reused))
            #expect(item["domain"] as? String == "global")
            #expect(item["reason"] as? String == "invalid")

            let other = try await Self.browserCallback(firebase)
            let wrongSession = try await Self.signInWithIdp(
                firebase, requestUri: other.requestUri, sessionId: callback.sessionId)
            #expect(Self.message(wrongSession)?.hasPrefix("INVALID_IDP_RESPONSE") == true)
            let noSession = try await Self.signInWithIdp(firebase, requestUri: other.requestUri)
            #expect(Self.message(noSession)?.hasPrefix("INVALID_IDP_RESPONSE") == true)

            firebase.setAuthorizeOutcome(.wrongState)
            let tampered = try await Self.browserCallback(firebase)
            let mismatch = try await Self.signInWithIdp(
                firebase, requestUri: tampered.requestUri, sessionId: tampered.sessionId)
            #expect(Self.message(mismatch)?.hasPrefix("INVALID_IDP_RESPONSE") == true)
            #expect(firebase.signInWithIdpRequests.compactMap(\.errorCode).count == 4)

            firebase.setAuthorizeOutcome(.accessDenied)
            let denied = try await Self.browserCallback(firebase)
            let items = Self.items(denied.requestUri)
            #expect(items["error"] == "access_denied")
            #expect(items["state"]?.isEmpty == false)
            #expect(items["code"] == nil)
            #expect(firebase.authorizeRequests.last?.errorCode == "access_denied")

            // Registered redirect URIs: Entra ignores the port of a localhost one.
            firebase.setAuthorizeOutcome(.signIn)
            firebase.setRegisteredRedirectURIs(["http://localhost/callback"])
            let anyPort = try await Self.browserCallback(firebase)
            #expect(Self.items(anyPort.requestUri)["code"] != nil)
            firebase.setRegisteredRedirectURIs(["http://localhost/other"])
            let started = try await Self.createAuthUri(firebase)
            let unregistered = try await Self.visit(firebase, try #require(started.json["authUri"] as? String))
            #expect(unregistered.status == 400)
            #expect(unregistered.location == nil)
        }
    }

    @Test("createAuthUri: localhost only, no state or fragment, no reserved customParameter, provider enabled")
    func createAuthUriChecks() async throws {
        try await Self.withFirebase { firebase in
            let loopbackIP = try await Self.createAuthUri(firebase, continueUri: "http://127.0.0.1:8975/callback")
            #expect(loopbackIP.status == 400)
            #expect(Self.message(loopbackIP) == "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
            let withState = try await Self.createAuthUri(firebase, continueUri: Self.callback + "?state=x")
            #expect(Self.message(withState) == "INVALID_CONTINUE_URI")
            let withFragment = try await Self.createAuthUri(firebase, continueUri: Self.callback + "#x")
            #expect(Self.message(withFragment) == "INVALID_CONTINUE_URI")
            let reserved = try await Self.createAuthUri(firebase, custom: ["redirect_uri": "http://evil.example"])
            #expect(Self.message(reserved)?.hasPrefix("INVALID_CUSTOM_PARAMETER") == true)
            let echoed = try await Self.createAuthUri(firebase, sessionId: "my-session")
            #expect(echoed.json["sessionId"] as? String == "my-session")
            #expect(firebase.createAuthUriRequests.last?["customParameter.tenant"] == "contoso.onmicrosoft.com")

            firebase.setMicrosoftEnabled(false)
            let disabled = try await Self.createAuthUri(firebase)
            #expect(Self.message(disabled)?.hasPrefix("OPERATION_NOT_ALLOWED") == true)
        }
    }

    @Test("Microsoft tokens in postBody: production's INVALID_CREDENTIAL_OR_PROVIDER_ID; emulator mode takes claims")
    func postBodyTokens() async throws {
        try await Self.withFirebase { firebase in
            let rejected = try await Self.signInWithIdp(
                firebase, requestUri: "http://localhost",
                extra: ["postBody": "providerId=microsoft.com&id_token=eyJ.x.y"])
            #expect(rejected.status == 400)
            #expect(
                Self.message(rejected)
                    == "INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: "
                    + "http://localhost?id_token=eyJ.x.y&providerId=microsoft.com")

            firebase.setEmulatorMode(true)
            let notSupported = try await Self.createAuthUri(firebase)
            #expect(notSupported.status == 501)
            #expect((notSupported.json["error"] as? [String: Any])?["status"] as? String == "NOT_IMPLEMENTED")
            let claims = #"{"sub":"emu-sub-1","email":"alice@contoso.example","name":"Alice"}"#
            let accepted = try await Self.post(
                firebase, FakeFirebaseEndpoints.identityToolkitPrefix + "signInWithIdp?key=any-key-will-do",
                json: [
                    "requestUri": "http://localhost", "returnSecureToken": true,
                    "postBody": "providerId=microsoft.com&id_token=" + FakeIdentityForm.encodeComponent(claims),
                ])
            #expect(accepted.status == 200)
            #expect(accepted.json["federatedId"] as? String == "emu-sub-1")
            #expect(accepted.json["oauthAccessToken"] as? String == "FirebaseAuthEmulatorFakeAccessToken_microsoft.com")
            #expect(accepted.json["oauthExpireIn"] == nil)
            #expect(accepted.json["expiresIn"] as? String == "3600")
        }
    }

    // MARK: - One account per email

    @Test("needConfirmation for an existing password user, linking with idToken + pendingToken, link conflicts")
    func needConfirmationThenLink() async throws {
        try await Self.withFirebase { firebase in
            let uid = firebase.addPasswordUser(email: "alice@contoso.example", password: "pw-1")
            let pending = try await Self.signInWithMicrosoft(firebase)
            #expect(pending.status == 200)
            #expect(pending.json["needConfirmation"] as? Bool == true)
            #expect(pending.json["localId"] as? String == uid)
            #expect(pending.json["email"] as? String == "alice@contoso.example")
            #expect(pending.json["verifiedProvider"] as? [String] == ["password"])
            #expect(pending.json["idToken"] == nil)
            let pendingToken = try #require(pending.json["pendingToken"] as? String)
            #expect(firebase.signInWithIdpRequests.last?.needConfirmation == true)

            let password = try await Self.signInWithPassword(firebase, "alice@contoso.example", "pw-1")
            let idToken = try #require(password.json["idToken"] as? String)
            let linked = try await Self.signInWithIdp(
                firebase, requestUri: "http://localhost", extra: ["idToken": idToken, "pendingToken": pendingToken])
            #expect(linked.status == 200)
            #expect(linked.json["localId"] as? String == uid)
            #expect(linked.json["isNewUser"] as? Bool == false)
            #expect(firebase.account(uid)?.federatedIDs == ["microsoft.com": MicrosoftUser.alice.oid])
            let claims = FakeFirebase.claims(ofIDToken: try #require(linked.json["idToken"] as? String))
            let identities = (claims?["firebase"] as? [String: Any])?["identities"] as? [String: Any]
            #expect(identities?["microsoft.com"] as? [String] == [MicrosoftUser.alice.oid])
            // Now the browser sign-in goes straight to that account.
            #expect(try await Self.signInWithMicrosoft(firebase).json["localId"] as? String == uid)

            // Another user cannot take the Microsoft identity.
            let bob = firebase.addPasswordUser(email: "bob@contoso.example", password: "pw-2")
            let bobToken = try #require(firebase.issueTokens(for: bob)?.idToken)
            let callback = try await Self.browserCallback(firebase)
            let conflict = try await Self.signInWithIdp(
                firebase, requestUri: callback.requestUri, sessionId: callback.sessionId,
                extra: ["idToken": bobToken, "returnIdpCredential": false])
            #expect(conflict.status == 400)
            #expect(Self.message(conflict) == "FEDERATED_USER_ID_ALREADY_LINKED")
            let retry = try await Self.browserCallback(firebase)
            let flagged = try await Self.signInWithIdp(
                firebase, requestUri: retry.requestUri, sessionId: retry.sessionId, extra: ["idToken": bobToken])
            #expect(flagged.status == 200)
            #expect(flagged.json["errorMessage"] as? String == "FEDERATED_USER_ID_ALREADY_LINKED")
            #expect(flagged.json["oauthAccessToken"] is String)
            #expect(flagged.json["idToken"] == nil)
            #expect(firebase.account(bob)?.federatedIDs.isEmpty == true)
        }
    }

    @Test("knobs: errorMessage (200 with returnIdpCredential), oauthExpireIn as a string, a short expiresIn")
    func signInWithIdpKnobs() async throws {
        try await Self.withFirebase { firebase in
            firebase.enqueue(.errorMessage("EMAIL_EXISTS"), at: .signInWithIdp)
            let callback = try await Self.browserCallback(firebase)
            let flagged = try await Self.signInWithIdp(
                firebase, requestUri: callback.requestUri, sessionId: callback.sessionId)
            #expect(flagged.status == 200)
            #expect(flagged.json["errorMessage"] as? String == "EMAIL_EXISTS")
            #expect(flagged.json["idToken"] == nil)
            #expect(flagged.json["oauthAccessToken"] is String)
            #expect(firebase.signInWithIdpRequests.last?.injected == "errorMessage EMAIL_EXISTS")

            // Nothing was consumed: the same callback still signs in.
            firebase.setOAuthExpireIn(.string(600))
            firebase.setExpiresIn(120)
            let answer = try await Self.signInWithIdp(
                firebase, requestUri: callback.requestUri, sessionId: callback.sessionId)
            #expect(answer.status == 200)
            #expect(answer.json["oauthExpireIn"] as? String == "600")
            #expect(answer.json["expiresIn"] as? String == "120")
            let idToken = try #require(answer.json["idToken"] as? String)
            let claims = try #require(FakeFirebase.claims(ofIDToken: idToken))
            let iat = try #require(claims["iat"] as? Int)
            #expect(claims["exp"] as? Int == iat + 120)
        }
    }

    // MARK: - Password

    @Test("signInWithPassword: the answer, enumeration protection on and off, missing fields, USER_DISABLED")
    func passwordSignIn() async throws {
        try await Self.withFirebase { firebase in
            let uid = firebase.addPasswordUser(email: "carol@contoso.example", password: "s3cret", displayName: "Carol")
            let answer = try await Self.signInWithPassword(firebase, "CAROL@contoso.example", "s3cret")
            #expect(answer.status == 200)
            #expect(answer.json["kind"] as? String == "identitytoolkit#VerifyPasswordResponse")
            #expect(answer.json["localId"] as? String == uid)
            #expect(answer.json["registered"] as? Bool == true)
            #expect(answer.json["displayName"] as? String == "Carol")
            #expect(answer.json["expiresIn"] as? String == "3600")
            let idToken = try #require(answer.json["idToken"] as? String)
            let provider = (FakeFirebase.claims(ofIDToken: idToken)?["firebase"] as? [String: Any])?["sign_in_provider"]
            #expect(provider as? String == "password")
            #expect(firebase.passwordSignIns.first?["password"] == "<redacted>")

            let wrongPassword = try await Self.signInWithPassword(firebase, "carol@contoso.example", "nope")
            #expect(Self.message(wrongPassword) == "INVALID_LOGIN_CREDENTIALS")
            let unknown = try await Self.signInWithPassword(firebase, "dave@contoso.example", "s3cret")
            #expect(Self.message(unknown) == "INVALID_LOGIN_CREDENTIALS")
            firebase.setEmailEnumerationProtection(false)
            #expect(
                Self.message(try await Self.signInWithPassword(firebase, "carol@contoso.example", "nope"))
                    == "INVALID_PASSWORD")
            #expect(
                Self.message(try await Self.signInWithPassword(firebase, "dave@contoso.example", "x"))
                    == "EMAIL_NOT_FOUND")
            #expect(Self.message(try await Self.signInWithPassword(firebase, nil, "x")) == "MISSING_EMAIL")
            #expect(
                Self.message(try await Self.signInWithPassword(firebase, "carol@contoso.example", nil))
                    == "MISSING_PASSWORD")

            firebase.disableUser(uid)
            #expect(
                Self.message(try await Self.signInWithPassword(firebase, "carol@contoso.example", "s3cret"))
                    == "USER_DISABLED")
            #expect(firebase.passwordSignIns.map(\.status) == [200, 400, 400, 400, 400, 400, 400, 400])
        }
    }

    // MARK: - securetoken

    @Test("securetoken: a form and a JSON refresh; the answer's shape; grant and token errors")
    func secureTokenRefresh() async throws {
        try await Self.withFirebase { firebase in
            let uid = firebase.addPasswordUser(email: "erin@contoso.example", password: "pw")
            let refreshToken = try #require(firebase.issueTokens(for: uid)?.refreshToken)

            let form = try await Self.refresh(firebase, refreshToken)
            #expect(form.status == 200)
            #expect(form.json["expires_in"] as? String == "3600")
            #expect(form.json["token_type"] as? String == "Bearer")
            #expect(form.json["refresh_token"] as? String == refreshToken)
            #expect(form.json["user_id"] as? String == uid)
            #expect(form.json["project_id"] as? String == FakeFirebase.defaultProjectNumber)
            let accessToken = try #require(form.json["access_token"] as? String)
            #expect(form.json["id_token"] as? String == accessToken)
            #expect(firebase.verifyIDToken(accessToken) == uid)

            let json = try await Self.refresh(firebase, refreshToken, json: true)
            #expect(json.status == 200)
            #expect(json.json["user_id"] as? String == uid)
            #expect(firebase.secureTokenRequests.map(\.bodyStyle) == [.form, .json])

            let badGrant = try await Self.post(
                firebase, firebase.secureTokenPath, json: ["grantType": "password", "refreshToken": refreshToken])
            #expect(Self.message(badGrant) == "INVALID_GRANT_TYPE")
            let missing = try await Self.post(firebase, firebase.secureTokenPath, json: ["grantType": "refresh_token"])
            #expect(Self.message(missing) == "MISSING_REFRESH_TOKEN")
            #expect(Self.message(try await Self.refresh(firebase, "AMf-vBnot-issued")) == "INVALID_REFRESH_TOKEN")
        }
    }

    @Test("securetoken: USER_DISABLED, TOKEN_EXPIRED after revocation, USER_NOT_FOUND after deletion")
    func secureTokenAccountErrors() async throws {
        try await Self.withFirebase { firebase in
            let uid = firebase.addPasswordUser(email: "frank@contoso.example", password: "pw")
            let refreshToken = try #require(firebase.issueTokens(for: uid)?.refreshToken)
            firebase.disableUser(uid)
            #expect(Self.message(try await Self.refresh(firebase, refreshToken)) == "USER_DISABLED")
            #expect(!firebase.isRefreshTokenValid(refreshToken))
            firebase.enableUser(uid)
            #expect(try await Self.refresh(firebase, refreshToken).status == 200)
            firebase.revokeRefreshTokens(for: uid)
            #expect(Self.message(try await Self.refresh(firebase, refreshToken)) == "TOKEN_EXPIRED")
            firebase.deleteUser(uid)
            #expect(Self.message(try await Self.refresh(firebase, refreshToken)) == "USER_NOT_FOUND")
        }
    }

    @Test("securetoken failure injection: 429 with Retry-After, 503, then the normal answer; waits see them")
    func secureTokenInjection() async throws {
        try await Self.withFirebase { firebase in
            let uid = firebase.addPasswordUser(email: "gina@contoso.example", password: "pw")
            let refreshToken = try #require(firebase.issueTokens(for: uid)?.refreshToken)
            firebase.enqueueSecureToken(.throttle(retryAfter: 7))
            firebase.enqueueSecureToken(.unavailable)

            let throttled = try await Self.refresh(firebase, refreshToken)
            #expect(throttled.status == 429)
            #expect(throttled.response.header("retry-after") == "7")
            #expect((throttled.json["error"] as? [String: Any])?["status"] as? String == "RESOURCE_EXHAUSTED")
            let unavailable = try await Self.refresh(firebase, refreshToken, json: true)
            #expect(unavailable.status == 503)
            #expect((unavailable.json["error"] as? [String: Any])?["status"] as? String == "UNAVAILABLE")
            #expect(try await Self.refresh(firebase, refreshToken).status == 200)

            try await firebase.waitForSecureTokenRequests(3)
            #expect(firebase.secureTokenRequests.map(\.injected) == ["throttle(retryAfter: 7)", "unavailable", nil])
            #expect(firebase.secureTokenRequests.map(\.status) == [429, 503, 200])
        }
    }

    // MARK: - API key

    @Test("API key: none → 403 PERMISSION_DENIED, wrong → 400 API_KEY_INVALID, the header works")
    func apiKey() async throws {
        try await Self.withFirebase { firebase in
            let body: [String: Any] = ["grant_type": "refresh_token", "refresh_token": "x"]
            let none = try await Self.post(firebase, FakeFirebaseEndpoints.secureTokenPath, json: body)
            #expect(none.status == 403)
            let noneError = try #require(none.json["error"] as? [String: Any])
            #expect(noneError["message"] as? String == "The request is missing a valid API key.")
            #expect(noneError["status"] as? String == "PERMISSION_DENIED")

            let wrong = try await Self.post(
                firebase, FakeFirebaseEndpoints.identityToolkitPrefix + "signInWithPassword?key=AIzaWrong",
                json: ["email": "a@b.example", "password": "x"])
            #expect(wrong.status == 400)
            let details = (wrong.json["error"] as? [String: Any])?["details"] as? [[String: Any]]
            #expect(details?.first?["reason"] as? String == "API_KEY_INVALID")
            #expect(firebase.passwordSignIns.first?.errorCode == "API_KEY_INVALID")

            let header = try await Self.post(
                firebase, FakeFirebaseEndpoints.secureTokenPath, json: body,
                headers: [("x-goog-api-key", firebase.apiKey)])
            #expect(Self.message(header) == "INVALID_REFRESH_TOKEN")
            #expect(firebase.secureTokenRequests.map(\.keySource) == [.none, .header])
        }
    }
}
