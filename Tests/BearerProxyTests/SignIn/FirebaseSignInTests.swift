import Foundation
import Synchronization
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("firebase flow: Microsoft through Firebase, email/password, two token kinds")
struct FirebaseSignInTests {
    typealias Harness = FirebaseHarness

    @Test("Microsoft through Firebase: createAuthUri → browser → signInWithIdp; uid, email, oid, tid — never sub")
    func microsoftSignIn() async throws {
        try await Harness.withFirebase { firebase in
            try await SignInHarness.with(
                account: Harness.microsoft(firebase), routes: Harness.routes(),
                environment: Harness.environment(firebase)
            ) { account in
                let console = ScriptedConsole()
                let (result, page) = try await Harness.signIn(account, console: console)
                let identity = try #require(try result.get())
                let user = FakeFirebase.MicrosoftUser.alice
                #expect(identity.objectID == user.oid)
                #expect(identity.objectID != user.sub)
                #expect(identity.tenantID == user.tid)
                #expect(identity.firebaseUID == firebase.accounts.first?.localID)
                #expect(identity.username == user.email)
                #expect(page?.bodyText.contains("You can close this tab") == true)

                let created = try #require(firebase.createAuthUriRequests.first)
                #expect(created["providerId"] == "microsoft.com")
                #expect(created["continueUri"]?.hasPrefix("http://localhost:") == true)
                #expect(created["customParameter.tenant"] == "contoso.onmicrosoft.com")
                #expect(created["customParameter.prompt"] == "select_account")
                #expect(created["customParameter.login_hint"] == "alice@contoso.example")
                #expect(created.apiKey == firebase.apiKey)
                #expect(firebase.authorizeRequests.first?["tenant"] == "contoso.onmicrosoft.com")

                // Both tokens came with the one sign-in: no refresh yet.
                let idToken = try #require(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key))
                let graphToken = try #require(account.tokens.cachedToken(for: FirebaseTokenKind.providerAccess.key))
                #expect(firebase.verifyIDToken(idToken.value) == identity.firebaseUID)
                #expect(firebase.verifyGraphAccessToken(graphToken.value) == user.oid)
                #expect(firebase.secureTokenRequests.isEmpty)
                for secret in [idToken.value, graphToken.value, firebase.apiKey] {
                    #expect(!console.transcript.contains(secret), "a secret was shown")
                }
            }
        }
    }

    @Test("one sign-in serves both routes; each upstream sees only its own kind of token")
    func twoKindsThroughTheProxy() async throws {
        try await Harness.withFirebase { firebase in
            try await withUpstream({ _ in .echo }) { api in
                try await withUpstream({ _ in .echo }) { graph in
                    try await ProxyHarness.with(
                        routes: Harness.routes(api: api.baseURL, graph: graph.baseURL),
                        account: Harness.microsoft(firebase), environment: Harness.environment(firebase)
                    ) { proxy in
                        let before = try await TestClient.send(port: proxy.port, uri: "/api/whoami")
                        #expect(before.status == .unauthorized)
                        #expect(before.bodyText.contains("bearer-proxy login"))
                        _ = try await Harness.signIn(proxy.proxy.account).result.get()

                        let apiToken = try #require(
                            try await TestClient.send(port: proxy.port, uri: "/api/whoami").echo()
                                .header("authorization")?.dropFirst(7))
                        let graphToken = try #require(
                            try await TestClient.send(port: proxy.port, uri: "/graph/me").echo()
                                .header("authorization")?.dropFirst(7))
                        #expect(firebase.verifyIDToken(String(apiToken)) != nil)
                        #expect(firebase.verifyGraphAccessToken(String(apiToken)) == nil)
                        #expect(firebase.verifyGraphAccessToken(String(graphToken)) != nil)
                        #expect(firebase.verifyIDToken(String(graphToken)) == nil)
                        #expect(api.requests.count == 1 && graph.requests.count == 1)
                    }
                }
            }
        }
    }

    @Test("the Microsoft token's expiry: 401 problem+json 'run: bearer-proxy login', upstream never contacted")
    func microsoftTokenExpiry() async throws {
        // Already expired when it arrives (a token with some life left is used within its margin: #22 item 6).
        for expireIn in [FakeFirebase.OAuthExpireIn.int(0), .string(0)] {
            var configuration = FakeFirebase.Configuration()
            configuration.oauthExpireIn = expireIn
            try await Harness.withFirebase(configuration) { firebase in
                try await withUpstream({ _ in .echo }) { graph in
                    try await ProxyHarness.with(
                        routes: Harness.routes(graph: graph.baseURL), account: Harness.microsoft(firebase),
                        environment: Harness.environment(firebase)
                    ) { proxy in
                        _ = try await Harness.signIn(proxy.proxy.account).result.get()
                        // No life left: the token is not used, and Firebase cannot renew it.
                        let response = try await TestClient.send(port: proxy.port, uri: "/graph/me")
                        #expect(response.status == .unauthorized, "\(expireIn)")
                        #expect(response.headers.first(name: "content-type") == "application/problem+json")
                        #expect(response.bodyText.contains("Firebase cannot renew"))
                        #expect(response.bodyText.contains("bearer-proxy login"))
                        #expect(graph.requests.isEmpty)
                    }
                }
            }
        }
    }

    @Test("the ID token is refreshed through securetoken (form body) before it has 5 minutes left")
    func idTokenRefresh() async throws {
        let clock = TestClock()
        try await Harness.withFirebase { firebase in
            try await Harness.withSignedInMicrosoft(firebase, clock: clock) { account, first in
                clock.advance(1801)  // past the half-life, 29 minutes left
                #expect(await account.tokens.refreshDueTokens() == 1)
                let refreshed = try #require(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key))
                // The fake mints from its own clock, so within one second the new JWT may equal the old one; the
                // cache entry is new all the same.
                #expect(refreshed.expiresOn > first.expiresOn)
                let request = try #require(firebase.secureTokenRequests.first)
                #expect(request.bodyStyle == .form)
                #expect(request["grant_type"] == "refresh_token")
                #expect(firebase.verifyIDToken(refreshed.value) != nil)
            }
        }
    }

    @Test("securetoken 429 or 5xx: the valid ID token is kept and the next try waits (backoff)")
    func refreshFailureKeepsToken() async throws {
        for failure in [FakeFirebase.Failure.throttle(retryAfter: 30), .unavailable] {
            let clock = TestClock()
            try await Harness.withFirebase { firebase in
                try await Harness.withSignedInMicrosoft(firebase, clock: clock) { account, first in
                    firebase.enqueueSecureToken(failure)
                    clock.advance(1801)
                    #expect(await account.tokens.refreshDueTokens() == 0)
                    #expect(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key)?.value == first.value)
                    #expect(await account.tokens.refreshDueTokens() == 0)
                    #expect(firebase.secureTokenRequests.count == 1, "no second request during the backoff")
                    #expect(account.tokens.status(for: FirebaseTokenKind.idToken.key).lastError != nil)
                }
            }
        }
    }

    @Test("a disabled user: the sign-in says so, and a refresh turns into 401 'run: bearer-proxy login'")
    func userDisabled() async throws {
        let clock = TestClock()
        try await Harness.withFirebase { firebase in
            let email = "carol@example.com"
            let uid = firebase.addPasswordUser(email: email, password: Harness.password)
            let environment = Harness.environment(firebase, [Harness.passwordVariable: Harness.password])
            try await SignInHarness.with(
                account: Harness.password(firebase, email: email), routes: Harness.routes(graph: nil),
                environment: environment, now: { clock.now }
            ) { account in
                _ = try await account.signInWithinLimit(console: ScriptedConsole(canAsk: false))
                firebase.disableUser(uid)
                account.tokens.replaceTokens(with: [], because: .signedOut)
                await #expect(throws: TokenError.self) {
                    _ = try await account.tokens.accessTokenWithinLimit(for: FirebaseTokenKind.idToken.key)
                }
                do {
                    _ = try await account.tokens.accessTokenWithinLimit(for: FirebaseTokenKind.idToken.key)
                } catch let error as TokenError {
                    guard case .signInRequired(let reason) = error else {
                        Issue.record("expected sign-in required, got \(error)")
                        return
                    }
                    #expect(reason.contains("USER_DISABLED"))
                }
            }
            try await SignInHarness.with(
                account: Harness.password(firebase, email: email), routes: Harness.routes(graph: nil),
                environment: environment
            ) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole(canAsk: false))
                #expect(failure.message == "This Firebase account has been disabled by an administrator.")
            }
        }
    }

    @Test("email and password: a hidden prompt, and one message for every wrong-credential code")
    func passwordSignIn() async throws {
        try await Harness.withFirebase { firebase in
            let email = "dave@example.com"
            let uid = firebase.addPasswordUser(email: email, password: Harness.password)
            try await SignInHarness.with(
                account: Harness.password(firebase, email: email, passwordEnv: false),
                routes: Harness.routes(graph: nil), environment: Harness.environment(firebase)
            ) { account in
                let console = ScriptedConsole(answers: [Harness.password])
                let identity = try await account.signInWithinLimit(console: console)
                #expect(identity?.firebaseUID == uid)
                #expect(console.questions == [.init(text: "Firebase password for \(email): ", hidden: true)])
            }
            for protection in [true, false] {
                firebase.setEmailEnumerationProtection(protection)
                for candidate in [email, "nobody@example.com"] {
                    try await SignInHarness.with(
                        account: Harness.password(firebase, email: candidate, passwordEnv: false),
                        routes: Harness.routes(graph: nil), environment: Harness.environment(firebase)
                    ) { account in
                        let failure = try await SignInHarness.failure(
                            account, console: ScriptedConsole(answers: ["wrong"]))
                        #expect(failure.message == "Wrong email or password for \(candidate); run: bearer-proxy login")
                    }
                }
            }
            let codes = firebase.passwordSignIns.compactMap(\.errorCode)
            #expect(Set(codes) == ["INVALID_LOGIN_CREDENTIALS", "INVALID_PASSWORD", "EMAIL_NOT_FOUND"])
        }
    }

    @Test("needConfirmation names the email and the way in; login --link signs in that way and links Microsoft")
    func needConfirmationAndLink() async throws {
        try await Harness.withFirebase { firebase in
            let email = try #require(FakeFirebase.MicrosoftUser.alice.email)
            let uid = firebase.addPasswordUser(email: email, password: Harness.password)
            try await SignInHarness.with(
                account: Harness.microsoft(firebase), routes: Harness.routes(),
                environment: Harness.environment(firebase)
            ) { account in
                let (result, _) = try await Harness.signIn(account)
                guard case .failure(let failure) = result else {
                    Issue.record("signed in without confirmation")
                    return
                }
                #expect(failure.message.contains("A Firebase account for \(email) already exists"))
                #expect(failure.message.contains("signs in with password"))
                #expect(failure.message.contains("bearer-proxy login --link"))
                #expect(!account.session.isSignedIn)

                let console = ScriptedConsole(answers: [Harness.password])
                let (linked, _) = try await Harness.signIn(
                    account, console: console, options: SignInOptions(link: true))
                let identity = try #require(try linked.get())
                #expect(identity.firebaseUID == uid)
                #expect(console.questions.first?.hidden == true)
                #expect(firebase.account(uid)?.providers.contains("microsoft.com") == true)
                #expect(account.tokens.cachedToken(for: FirebaseTokenKind.providerAccess.key) != nil)
            }
        }
    }

    @Test("upstream 401 invalid_token on a firebase-id route: refresh through securetoken, replay once")
    func invalidTokenReplay() async throws {
        let seen = Mutex(0)
        try await Harness.withFirebase { firebase in
            // The first request is refused as carrying a bad token (the fake may mint the same JWT again within a
            // second, so the upstream goes by request, not by token).
            try await withUpstream({ _ in
                let first = seen.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                return first
                    ? .respond(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]) : .echo
            }) { api in
                try await ProxyHarness.with(
                    routes: Harness.routes(api: api.baseURL, graph: nil), account: Harness.microsoft(firebase),
                    environment: Harness.environment(firebase)
                ) { proxy in
                    _ = try await Harness.signIn(proxy.proxy.account).result.get()
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/items")
                    #expect(response.status == .ok)
                    #expect(api.requests.count == 2)
                    #expect(firebase.secureTokenRequests.count == 1)
                }
            }
        }
    }

    @Test("logout forgets the Firebase account and both tokens, file included; it says revocation is Admin-only")
    func logout() async throws {
        try await Harness.withFirebase { firebase in
            let state = PersistenceIntegrationTests.temporaryState()
            try await SignInHarness.with(
                account: Harness.microsoft(firebase), routes: Harness.routes(),
                environment: Harness.environment(firebase),
                state: state
            ) { account in
                _ = try await Harness.signIn(account).result.get()
                account.persistence?.flush()
                let path = try #require(account.persistence?.store.path)
                #expect(FileManager.default.fileExists(atPath: path))
                let notes = await account.signOut()
                #expect(notes == ["Firebase offers clients no revocation: the refresh token was deleted here."])
                #expect(!account.session.isSignedIn)
                #expect(account.tokens.allTokens.isEmpty)
                #expect(!FileManager.default.fileExists(atPath: path))
            }
        }
    }

    @Test("the Auth emulator: needConfirmation is handled as on the browser path, and login --link links Microsoft")
    func emulatorNeedConfirmation() async throws {
        var configuration = FakeFirebase.Configuration()
        configuration.emulatorMode = true
        try await Harness.withFirebase(configuration) { firebase in
            let email = "alice@contoso.example"
            let uid = firebase.addPasswordUser(email: email, password: Harness.password)
            let account = Harness.microsoft(firebase).replacingOccurrences(
                of: #""apiBaseURL": "\#(firebase.baseURL)""#, with: #""emulatorHost": "\#(firebase.emulatorHost)""#)
            try await SignInHarness.with(
                account: account, routes: Harness.routes(), environment: Harness.environment(firebase)
            ) { account in
                let failure = try await SignInHarness.failure(account, console: ScriptedConsole())
                #expect(failure.message.contains("A Firebase account for \(email) already exists"), "\(failure)")
                #expect(failure.message.contains("signs in with password"))
                #expect(failure.message.contains("bearer-proxy login --link"))

                let console = ScriptedConsole(answers: [Harness.password])
                let identity = try await account.signInWithinLimit(console: console, options: SignInOptions(link: true))
                #expect(identity?.firebaseUID == uid)
                #expect(firebase.account(uid)?.providers.contains("microsoft.com") == true)
                #expect(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key) != nil)
            }
        }
    }

    @Test("the Auth emulator: emulatorHost paths, Microsoft by fake claims without a browser")
    func emulator() async throws {
        var configuration = FakeFirebase.Configuration()
        configuration.emulatorMode = true
        try await Harness.withFirebase(configuration) { firebase in
            let account = Harness.microsoft(firebase).replacingOccurrences(
                of: #""apiBaseURL": "\#(firebase.baseURL)""#, with: #""emulatorHost": "\#(firebase.emulatorHost)""#)
            try await SignInHarness.with(
                account: account, routes: Harness.routes(), environment: Harness.environment(firebase)
            ) { account in
                let console = ScriptedConsole()
                let identity = try await account.signInWithinLimit(console: console)
                #expect(identity?.username == "alice@contoso.example")
                #expect(console.opened.isEmpty)
                #expect(firebase.signInWithIdpRequests.count == 1)
                #expect(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key) != nil)
            }
        }
    }
}
