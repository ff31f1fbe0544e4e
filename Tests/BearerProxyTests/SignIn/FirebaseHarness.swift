import Foundation
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

/// routes.json pieces and runs for the `firebase` flow against ``FakeFirebase``, which the flow reaches through
/// `apiBaseURL` (production behaviour: the browser round trip) or `emulatorHost` (the emulator's shortcut).
enum FirebaseHarness {
    static let keyVariable = "TEST_FIREBASE_KEY"
    static let passwordVariable = "TEST_FIREBASE_PASSWORD"
    static let password = "hunter2-but-longer"

    /// Runs `body` with a fake Firebase project, shutting it down afterwards whatever happens.
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

    static func environment(_ firebase: FakeFirebase, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = [keyVariable: firebase.apiKey]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Microsoft through Firebase.
    static func microsoft(_ firebase: FakeFirebase, extra: String = "") -> String {
        #"{ "flow": "firebase", "apiKeyEnv": "\#(keyVariable)", "projectId": "\#(firebase.projectID)", "#
            + #""provider": "microsoft.com", "tenant": "contoso.onmicrosoft.com", "prompt": "select_account", "#
            + #""loginHint": "alice@contoso.example", "scopes": ["User.Read"], "#
            + #""apiBaseURL": "\#(firebase.baseURL)"\#(extra) }"#
    }

    /// Firebase email and password.
    static func password(_ firebase: FakeFirebase, email: String, passwordEnv: Bool = true) -> String {
        let variable = passwordEnv ? #", "passwordEnv": "\#(passwordVariable)""# : ""
        return #"{ "flow": "firebase", "apiKeyEnv": "\#(keyVariable)", "projectId": "\#(firebase.projectID)", "#
            + #""provider": "password", "email": "\#(email)"\#(variable), "apiBaseURL": "\#(firebase.baseURL)" }"#
    }

    /// A `firebase-id` route `/api` and a `provider-access` route `/graph`.
    static func routes(api: String = "https://api.example", graph: String? = "https://graph.example") -> String {
        var routes = [#"{ "prefix": "/api", "upstream": "\#(api)", "token": "firebase-id" }"#]
        if let graph { routes.append(#"{ "prefix": "/graph", "upstream": "\#(graph)", "token": "provider-access" }"#) }
        return "[" + routes.joined(separator: ", ") + "]"
    }

    /// Runs `body` with an account of one `firebase-id` route, signed in with Microsoft through `firebase`, on
    /// `clock`; and the ID token the sign-in left in the cache.
    static func withSignedInMicrosoft(
        _ firebase: FakeFirebase, clock: TestClock, _ body: (AccountRuntime, AccessToken) async throws -> Void
    ) async throws {
        try await SignInHarness.with(
            account: microsoft(firebase), routes: routes(graph: nil), environment: environment(firebase),
            now: { clock.now }
        ) { account in
            _ = try await signIn(account).result.get()
            try await body(account, try #require(account.tokens.cachedToken(for: FirebaseTokenKind.idToken.key)))
        }
    }

    /// Signs `account` in while the test plays the browser (following Firebase's auth URI to Microsoft and back to
    /// the loopback listener); the sign-in's result and the page the browser ended on.
    static func signIn(
        _ account: AccountRuntime, console: ScriptedConsole = ScriptedConsole(),
        options: SignInOptions = SignInOptions()
    ) async throws -> (result: Result<AccountIdentity?, SignInFailure>, page: TestResponse?) {
        async let visit: TestBrowser.Visit? = {
            guard let url = await console.nextOpenedURL() else { return nil }
            return try await TestBrowser.open(url)
        }()
        let result: Result<AccountIdentity?, SignInFailure>
        do {
            result = .success(try await account.signInWithinLimit(console: console, options: options))
        } catch let failure as SignInFailure {
            result = .failure(failure)
        }
        console.close()
        return (result, try await visit?.final)
    }
}
