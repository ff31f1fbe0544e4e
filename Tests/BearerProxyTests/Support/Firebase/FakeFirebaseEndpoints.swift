import NIOHTTP1

/// `FakeFirebase`'s routes: which request goes to which endpoint. Called on the connection's event loop once a
/// request has fully arrived; the lock-guarded work happens in `FakeFirebaseState`.
///
/// Paths are the Auth emulator's (`/<host>/<path>`), so a client pointed at an emulator host talks to the fake
/// unchanged; the legacy v3 names (`verifyAssertion`, `verifyPassword`, `createAuthUri` under
/// `/www.googleapis.com/identitytoolkit/v3/relyingparty/`) are accepted too. URLs in answers (the `authUri`)
/// follow the `Host` the client used.
struct FakeFirebaseEndpoints: Sendable {
    static let identityToolkitPrefix = "/identitytoolkit.googleapis.com/v1/accounts:"
    static let legacyPrefix = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
    static let secureTokenPath = "/securetoken.googleapis.com/v1/token"
    static let authorizePath = "/microsoft/authorize"

    let state: FakeFirebaseState
    /// `http://127.0.0.1:PORT`.
    let canonicalBaseURL: String

    /// The endpoint `path` names, if any.
    static func endpoint(for path: String) -> FakeFirebase.Endpoint? {
        switch path {
        case Self.identityToolkitPrefix + "createAuthUri", Self.legacyPrefix + "createAuthUri": return .createAuthUri
        case Self.identityToolkitPrefix + "signInWithIdp", Self.legacyPrefix + "verifyAssertion": return .signInWithIdp
        case Self.identityToolkitPrefix + "signInWithPassword", Self.legacyPrefix + "verifyPassword":
            return .signInWithPassword
        case Self.secureTokenPath: return .secureToken
        case Self.authorizePath: return .authorize
        default: return nil
        }
    }

    /// The reply to `request`.
    func reply(to request: FakeFirebaseRequest) -> FakeFirebaseReply {
        let base = request.headers.first(name: "host").map { "http://\($0)" } ?? self.canonicalBaseURL
        switch Self.endpoint(for: request.path) {
        case .authorize?:
            guard request.method == .GET else { return Self.notFound }
            return self.state.authorizeRequested(query: request.query, path: request.path)
        case let endpoint?:
            guard request.method == .POST else { return Self.notFound }
            return self.state.apiCalled(endpoint, request: request, baseURL: base)
        case nil:
            return Self.notFound
        }
    }

    /// Google's 404 (also for a known path with the wrong method).
    private static let notFound = FakeFirebaseReply.respond(
        FakeFirebaseError(status: 404, message: "Not Found").response())
}
