import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A fake Firebase Auth project (Identity Toolkit v1 + securetoken) with `microsoft.com` enabled, plus the fake
/// Microsoft authorization endpoint it sends browsers to: a real HTTP/1.1 server on 127.0.0.1 (port chosen by the
/// OS) for the `flow: firebase` tests.
///
/// Shaped like the Firebase Auth emulator (host-prefixed paths, so a client configured with an emulator host
/// talks to it unchanged), but with production's behaviour where the emulator differs: the real code flow
/// through createAuthUri, Microsoft tokens in `postBody` rejected, the API key checked, `oauthExpireIn`.
/// `Configuration.emulatorMode` switches to the emulator's behaviour instead.
///
/// Endpoints (`<base>` = `baseURL`, or whatever `Host` the client used; every Google call needs the API key as
/// `?key=` or `x-goog-api-key`, else 403 `PERMISSION_DENIED` (none) / 400 `API_KEY_INVALID` (wrong)):
/// - `POST <base>/identitytoolkit.googleapis.com/v1/accounts:createAuthUri` (`providerId:"microsoft.com"`,
///   `continueUri` on an authorized domain, `customParameter`, `oauthScope`, `sessionId`) → `authUri` on
///   `<base>/microsoft/authorize` carrying a fresh GCIP `state`, and the `sessionId`.
/// - `GET <base>/microsoft/authorize`: the Microsoft user (`setMicrosoftUser(_:)`, default `.alice`) signs in at
///   once: 302 to `<redirect_uri>?code&state` (`setAuthorizeOutcome(_:)` for `error=access_denied` or a wrong
///   state).
/// - `POST …/v1/accounts:signInWithIdp`: the callback URL as `requestUri` + the `sessionId` → the Firebase
///   session and the Microsoft credential (`oauthAccessToken`, `oauthIdToken`, `oauthExpireIn`); one account per
///   email (`needConfirmation`, linking with `idToken` + `pendingToken`).
/// - `POST …/v1/accounts:signInWithPassword` for accounts made with `addPasswordUser(email:password:)`.
/// - `POST <base>/securetoken.googleapis.com/v1/token`: the refresh grant, form or JSON.
///
/// Errors use Google's envelope (`FakeFirebaseError`). ID tokens are HS256 JWTs (`claims(ofIDToken:)`,
/// `verifyIDToken(_:)`); so are the fake Microsoft tokens (`claims(ofMicrosoftToken:)`,
/// `verifyGraphAccessToken(_:)`). Every request is recorded (`createAuthUriRequests`, `authorizeRequests`,
/// `signInWithIdpRequests`, `passwordSignIns`, `secureTokenRequests`) and can be waited for.
///
///     let firebase = try await FakeFirebase.start()
///     let uid = firebase.addPasswordUser(email: "alice@contoso.example", password: "pw")
///     firebase.enqueueSecureToken(.throttle(retryAfter: 2))     // the next refresh gets 429
///     ... run the proxy with emulatorHost = firebase.emulatorHost, apiKey = firebase.apiKey ...
///     try await firebase.waitForSecureTokenRequests(2)
///     try await firebase.shutdown()
final class FakeFirebase: Sendable {
    /// The default Web API key.
    static let defaultAPIKey = "AIzaSyFakeFirebaseKey-bearerProxyTests00"
    /// The default project id.
    static let defaultProjectID = "bearer-proxy-test"
    /// The default project number.
    static let defaultProjectNumber = "123456789012"
    /// The default client id of the Azure app behind `microsoft.com`.
    static let defaultAzureClientID = "f1eb0000-0000-4000-8000-00000000f1eb"

    /// What it was started with (knobs may have changed since).
    let configuration: Configuration
    private let server: FakeHTTPServer
    /// The shared state (used by the fake's extension files; tests use the fake's methods).
    let state: FakeFirebaseState

    /// The port it listens on (127.0.0.1).
    var port: Int { self.server.port }

    private init(configuration: Configuration, server: FakeHTTPServer, state: FakeFirebaseState) {
        self.configuration = configuration
        self.server = server
        self.state = state
    }

    /// Starts a fake on 127.0.0.1:0.
    static func start(_ configuration: Configuration = .init()) async throws -> FakeFirebase {
        let state = FakeFirebaseState(
            configuration: configuration, timerLoop: MultiThreadedEventLoopGroup.singleton.any())
        let server = try await FakeHTTPServer.start(
            opened: state.connectionOpened, closed: state.connectionClosed
        ) { channel, _ in
            let endpoints = FakeFirebaseEndpoints(
                state: state, canonicalBaseURL: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(FakeFirebaseHandler(endpoints: endpoints))
        }
        return FakeFirebase(configuration: configuration, server: server, state: state)
    }

    /// Stops listening, closes every connection (hanging ones included) and fails pending waits. Idempotent.
    func shutdown() async throws {
        await self.server.shutdown(closing: self.state.shutDown())
    }

    // MARK: - URLs and identifiers

    /// `http://127.0.0.1:PORT` (no trailing slash).
    var baseURL: String { "http://127.0.0.1:\(self.port)" }
    /// `127.0.0.1:PORT`: what `FIREBASE_AUTH_EMULATOR_HOST` / `emulatorHost` would be.
    var emulatorHost: String { "127.0.0.1:\(self.port)" }
    /// `<base>/identitytoolkit.googleapis.com/v1` (append `/accounts:signInWithIdp?key=…`).
    var identityToolkitURL: String { "\(self.baseURL)/identitytoolkit.googleapis.com/v1" }
    /// `<base>/securetoken.googleapis.com/v1/token`.
    var secureTokenURL: String { "\(self.baseURL)\(FakeFirebaseEndpoints.secureTokenPath)" }
    /// `<base>/microsoft/authorize`.
    var authorizeURL: String { "\(self.baseURL)\(FakeFirebaseEndpoints.authorizePath)" }
    /// The API key calls must carry.
    var apiKey: String { self.configuration.apiKey }
    /// The project id (`aud` of ID tokens).
    var projectID: String { self.configuration.projectID }
    /// `https://securetoken.google.com/<projectId>` (`iss` of ID tokens).
    var issuer: String { self.state.operations.issuer }

    /// The path (with `?key=`) of an Identity Toolkit method, e.g. `accountsPath("signInWithIdp")` →
    /// `/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=<apiKey>`.
    func accountsPath(_ method: String) -> String {
        "\(FakeFirebaseEndpoints.identityToolkitPrefix)\(method)?key=\(self.apiKey)"
    }

    /// `/securetoken.googleapis.com/v1/token?key=<apiKey>`.
    var secureTokenPath: String { "\(FakeFirebaseEndpoints.secureTokenPath)?key=\(self.apiKey)" }
}
