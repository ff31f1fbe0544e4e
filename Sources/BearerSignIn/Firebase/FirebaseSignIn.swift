import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Signs a person in to Firebase Auth from a terminal (docs/firebase.md §1): with Microsoft through Firebase
/// (`accounts:createAuthUri` → the browser → the loopback `http://localhost:PORT/callback` →
/// `accounts:signInWithIdp`), or with email and password (`accounts:signInWithPassword`).
package struct FirebaseSignIn: InteractiveSignIn {
    package let account: FirebaseAccount
    package let client: FirebaseClient
    package let environment: [String: String]
    package let eventLoopGroup: any EventLoopGroup
    package let timeout: Duration
    package let now: @Sendable () -> Date

    package var needsPerson: Bool {
        switch account.provider {
        case .microsoft: account.emulatorHost == nil
        case .password(let signIn):
            signIn.passwordEnv.map { (environment[$0] ?? "").isEmpty } ?? true
        }
    }

    package func signIn(
        console: any SignInConsole, scopeSets: [ScopeSet], options: SignInOptions
    ) async throws(SignInFailure) -> SignedInAccount {
        let session: FirebaseSession
        var microsoftScopes: ScopeSet?
        switch account.provider {
        case .password(let signIn):
            console.show("Signing in \(signIn.email) to Firebase project \(account.projectId)…")
            let password = try await password(for: signIn.email, variable: signIn.passwordEnv, console: console)
            session = try await passwordSession(email: signIn.email, password: password)
        case .microsoft(let signIn):
            microsoftScopes = signIn.scopes
            if account.emulatorHost != nil {
                session = try await emulatorSession(signIn, console: console, options: options)
            } else {
                session = try await microsoftSession(signIn, console: console, options: options)
            }
        }
        let identity = session.identity
        return SignedInAccount(
            refreshToken: session.refreshToken, identity: identity,
            tokens: session.tokens(microsoftScopes: microsoftScopes, at: now()))
    }

    // MARK: - Email and password

    private func password(for email: String, variable: String?, console: any SignInConsole) async throws(SignInFailure)
        -> String
    {
        if let variable, let value = environment[variable], !value.isEmpty { return value }
        guard console.canAsk else {
            throw SignInFailure(
                .misconfigured,
                "No terminal to ask the Firebase password of \(email) at: set \(variable ?? "passwordEnv"), or run "
                    + "bearer-proxy login in a terminal.")
        }
        return try await console.ask("Firebase password for \(email): ", hidden: true)
    }

    private func passwordSession(email: String, password: String) async throws(SignInFailure) -> FirebaseSession {
        var body: [String: Any] = ["email": email, "password": password, "returnSecureToken": true]
        if let tenant = account.gcipTenantId { body["tenantId"] = tenant }
        return try await session("signInWithPassword", body, email: email)
    }

    // MARK: - Microsoft through Firebase

    private func microsoftSession(
        _ signIn: FirebaseAccount.MicrosoftSignIn, console: any SignInConsole, options: SignInOptions
    ) async throws(SignInFailure) -> FirebaseSession {
        // Firebase's state arrives with the auth URI, after the listener must already be up; the listener reads it
        // from here when a callback comes.
        let expected = ExpectedState()
        let listener: LoopbackRedirectListener
        do {
            listener = try await LoopbackRedirectListener.start(
                port: signIn.redirectPort, group: eventLoopGroup, timeout: timeout, alsoIPv6: true,
                accepts: { expected.matches($0.state) },
                page: { RedirectPage.html(for: $0, expectedState: expected.value ?? "") })
        } catch {
            throw SignInFailure(
                .misconfigured,
                "Cannot listen on localhost:\(signIn.redirectPort) for the sign-in redirect (\(error)); set "
                    + "\"redirectPort\" to a free port that the Azure app lists as a redirect URI.")
        }
        let continueURI = "http://localhost:\(listener.port)/callback"
        do {
            var parameters = signIn.extraParameters
            if let tenant = signIn.tenant { parameters["tenant"] = tenant }
            if let prompt = signIn.prompt { parameters["prompt"] = prompt.rawValue }
            if let loginHint = signIn.loginHint { parameters["login_hint"] = loginHint }
            var body: [String: Any] = [
                "providerId": "microsoft.com", "continueUri": continueURI, "customParameter": parameters,
            ]
            if !signIn.scopes.scopes.isEmpty { body["oauthScope"] = signIn.scopes.scopes.joined(separator: " ") }
            if let tenant = account.gcipTenantId { body["tenantId"] = tenant }
            let created = try await call("createAuthUri", body, email: nil)
            guard let authURI = created["authUri"] as? String, let sessionID = created["sessionId"] as? String,
                let state = AuthorizationCallback(target: authURI).state, !state.isEmpty
            else {
                throw SignInFailure(.unavailable, "Firebase's createAuthUri answered without an auth URI and state.")
            }
            expected.set(state)
            await console.presentSignIn(
                authURI,
                heading: "Sign in with Microsoft (through Firebase project \(account.projectId)) in your browser at:")
            let callback = try await listener.callback(
                timeoutMessage: "Nobody finished the sign-in in the browser in time; run: bearer-proxy login")
            if let error = callback.error {
                throw BrowserSignIn.failure(error: error, description: callback.errorDescription)
            }
            let requestURI = "http://localhost:\(listener.port)" + callback.target
            let assertion: [String: Any] = [
                "requestUri": requestURI, "sessionId": sessionID, "returnSecureToken": true,
                "returnIdpCredential": true,
            ]
            return try await idpSession(assertion, console: console, options: options)
        } catch let failure as SignInFailure {
            await listener.close()
            throw failure
        } catch {
            await listener.close()
            throw SignInFailure(.unavailable, "Sign-in failed: \(error)")
        }
    }

    /// The Auth emulator cannot do the browser round trip (its createAuthUri answers 501); like the Firebase
    /// SDKs in emulator mode, sign in with fake Microsoft claims instead. The answer is handled as the browser
    /// path's is, `needConfirmation` included.
    private func emulatorSession(
        _ signIn: FirebaseAccount.MicrosoftSignIn, console: any SignInConsole, options: SignInOptions
    ) async throws(SignInFailure) -> FirebaseSession {
        let email = signIn.loginHint ?? "user@example.com"
        // Unverified, as Firebase treats Microsoft's emails: an existing account with the email then asks for
        // confirmation (`needConfirmation`) here just as it does in production.
        let claims: [String: Any] = [
            "sub": "emulator-" + email, "email": email, "email_verified": false, "name": email,
        ]
        let json = String(decoding: JSONObject.data(claims) ?? Data(), as: UTF8.self)
        let body: [String: Any] = [
            "requestUri": "http://localhost",
            "postBody": FormEncoding.encode([("providerId", "microsoft.com"), ("id_token", json)]),
            "returnSecureToken": true, "returnIdpCredential": true,
        ]
        return try await idpSession(body, console: console, options: options)
    }

    /// `signInWithIdp`, with the "account exists with a different credential" case (`needConfirmation`): stop
    /// with who and how to sign in, or — with `login --link` — sign in the existing way and link Microsoft to it.
    private func idpSession(
        _ assertion: [String: Any], console: any SignInConsole, options: SignInOptions
    ) async throws(SignInFailure) -> FirebaseSession {
        let answer = try await call("signInWithIdp", assertion, email: nil)
        if answer["needConfirmation"] as? Bool == true {
            let email = answer["email"] as? String ?? "this email address"
            let providers = (answer["verifiedProvider"] as? [String]) ?? []
            let how = providers.isEmpty ? "another sign-in method" : providers.joined(separator: " or ")
            guard options.link else {
                throw SignInFailure(
                    .rejected,
                    "A Firebase account for \(email) already exists and signs in with \(how). To add Microsoft to it, "
                        + "run: bearer-proxy login --link (it asks for that account's password).")
            }
            guard providers.isEmpty || providers.contains("password"),
                let pendingToken = answer["pendingToken"] as? String
            else {
                throw SignInFailure(
                    .rejected,
                    "The account for \(email) signs in with \(how), which bearer-proxy cannot do from a terminal; link "
                        + "Microsoft to it in your app first.")
            }
            console.show("\(email) already has a Firebase account; sign in to it to link Microsoft.")
            let password = try await password(for: email, variable: nil, console: console)
            let existing = try await passwordSession(email: email, password: password)
            var link = assertion
            link["idToken"] = existing.idToken
            link["pendingToken"] = pendingToken
            let linked = try await call("signInWithIdp", link, email: email)
            guard let session = FirebaseSession(linked) else { throw Self.noTokens(linked) }
            console.show("Microsoft is now linked to the Firebase account of \(email).")
            return session
        }
        guard let session = FirebaseSession(answer) else { throw Self.noTokens(answer) }
        return session
    }

    private func session(_ method: String, _ body: [String: Any], email: String?) async throws(SignInFailure)
        -> FirebaseSession
    {
        let answer = try await call(method, body, email: email)
        guard let session = FirebaseSession(answer) else { throw Self.noTokens(answer) }
        return session
    }

    private static func noTokens(_ answer: [String: Any]) -> SignInFailure {
        if let message = answer["errorMessage"] as? String {
            let code = message.split(separator: ":").first.map { $0.trimmingWhitespace() }
            return SignInFailure(.rejected, "Firebase refused the sign-in: \(code ?? message).")
        }
        return SignInFailure(.unavailable, "Firebase answered the sign-in without tokens.")
    }

    private func call(_ method: String, _ body: [String: Any], email: String?) async throws(SignInFailure) -> [String:
        Any]
    {
        do {
            return try await client.accounts(method, body)
        } catch {
            switch error {
            case .unreachable(let error): throw SignInFailure(error)
            case .rejected(let failure): throw failure.signInFailure(email: email)
            }
        }
    }

    package init(
        account: FirebaseAccount, client: FirebaseClient, environment: [String: String],
        eventLoopGroup: any EventLoopGroup, timeout: Duration, now: @escaping @Sendable () -> Date
    ) {
        self.account = account
        self.client = client
        self.environment = environment
        self.eventLoopGroup = eventLoopGroup
        self.timeout = timeout
        self.now = now
    }
}

/// The `state` Firebase put in its auth URI, known only once `createAuthUri` has answered.
private final class ExpectedState: Sendable {
    private let state = Mutex<String?>(nil)

    var value: String? { state.withLock { $0 } }

    func set(_ value: String) { state.withLock { $0 = value } }

    func matches(_ candidate: String?) -> Bool {
        guard let candidate, let expected = value else { return false }
        return candidate == expected
    }
}
