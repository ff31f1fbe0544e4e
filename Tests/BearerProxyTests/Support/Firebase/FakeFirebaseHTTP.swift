import Foundation
import NIOCore
import NIOHTTP1

/// `FakeFirebase`'s routes (served by ``FakeHTTPHandler``): which request goes to which endpoint. Called on the connection's event loop once a
/// request has fully arrived; the lock-guarded work happens in `FakeFirebaseState`.
///
/// Paths are the Auth emulator's (`/<host>/<path>`), so a client pointed at an emulator host talks to the fake
/// unchanged; the legacy v3 names (`verifyAssertion`, `verifyPassword`, `createAuthUri` under
/// `/www.googleapis.com/identitytoolkit/v3/relyingparty/`) are accepted too. URLs in answers (the `authUri`)
/// follow the `Host` the client used.
struct FakeFirebaseEndpoints: FakeHTTPEndpoints {
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

    /// Google's 413.
    var bodyTooLarge: FakeFirebaseResponse {
        FakeFirebaseError(status: 413, message: "Request Entity Too Large").response()
    }

    func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (FakeFirebaseResponse) -> Void) {
        switch self.reply(to: request) {
        case .respond(let response): respond(response)
        }
    }

    /// Google's 404 (also for a known path with the wrong method).
    private static let notFound = FakeFirebaseReply.respond(
        FakeFirebaseError(status: 404, message: "Not Found").response())
}

/// One request as `FakeHTTPHandler` collected it.
typealias FakeFirebaseRequest = FakeHTTPRequest

/// The views of a request that only Google's endpoints need.
extension FakeHTTPRequest {
    /// Whether the body is declared JSON (`content-type: application/json…`).
    var isJSON: Bool {
        self.headers.first(name: "content-type")?.lowercased().contains("json") ?? false
    }

    /// The body as a JSON object; nil if it is not one (an empty body is an empty object).
    var jsonObject: [String: Any]? {
        if self.body.isEmpty { return [:] }
        return FakeIdentityJWT.object(self.body)
    }

    /// The API key (`?key=` first, then `x-goog-api-key`) and where it came from.
    var apiKey: (key: String?, source: RecordedFirebaseRequest.KeySource) {
        if let key = self.query["key"] { return (key, .query) }
        if let key = self.headers.first(name: "x-goog-api-key") { return (key, .header) }
        return (nil, .none)
    }
}

/// What `FakeFirebase` does with one request, as decided when it has fully arrived.
enum FakeFirebaseReply: Sendable {
    /// Write this response.
    case respond(FakeFirebaseResponse)
}

/// A complete HTTP response `FakeFirebase` writes: status, headers (without framing; the handler adds
/// `content-length`) and body.
struct FakeFirebaseResponse: FakeHTTPResponse, Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    /// A JSON response (`application/json; charset=UTF-8`, as Google sends it), keys sorted.
    static func json(status: Int = 200, _ object: [String: Any], headers: [(String, String)] = []) -> Self {
        Self(
            status: status,
            headers: [("content-type", "application/json; charset=UTF-8"), ("cache-control", "no-store")] + headers,
            body: FakeIdentityJWT.json(object))
    }

    /// An HTML page.
    static func html(status: Int, _ text: String, headers: [(String, String)] = []) -> Self {
        Self(status: status, headers: [("content-type", "text/html; charset=utf-8")] + headers, body: Array(text.utf8))
    }

    /// `302 Found` to `location`.
    static func redirect(to location: String) -> Self {
        self.html(
            status: 302, "<html><body>Redirecting…</body></html>",
            headers: [("location", location), ("cache-control", "no-store")])
    }
}
