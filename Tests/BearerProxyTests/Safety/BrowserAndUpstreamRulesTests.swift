import NIOHTTP1
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

@Suite("Security: browsers, cookies and redirects")
struct BrowserAndUpstreamRulesTests {
    static let allowed = #""allowedOrigins": ["http://localhost:3000"]"#

    @Test("a preflight from an allowed origin is answered by the proxy, never forwarded, never with a token")
    func preflightAnsweredLocally() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }, configuration: Self.allowed) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, method: "OPTIONS", uri: "/api/items",
                headers: [
                    ("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "PUT"),
                    ("Access-Control-Request-Headers", "content-type"),
                ])
            #expect(response.status == .noContent)
            #expect(response.header("access-control-allow-origin") == "http://localhost:3000")
            #expect(response.header("access-control-allow-methods") == "PUT")
            #expect(response.header("access-control-allow-headers") == "content-type")
            #expect(response.header("access-control-allow-credentials") == nil)
            #expect(upstream.requests.isEmpty)
            #expect(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://api/Read"])) == nil)
        }
    }

    @Test("a request from an allowed origin is forwarded and answered with CORS headers for that origin only")
    func allowedOriginGetsCORS() async throws {
        try await ProxyHarness.with(
            upstream: { _ in .respond(status: 200, headers: [("Access-Control-Allow-Origin", "*")], text: "{}") },
            configuration: Self.allowed
        ) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/items",
                headers: [("Origin", "http://localhost:3000"), ("Sec-Fetch-Site", "same-site")])
            #expect(response.status == .ok)
            #expect(response.headers[canonicalForm: "access-control-allow-origin"] == ["http://localhost:3000"])
            #expect(response.header("vary") == "Origin")
            #expect(response.header("access-control-allow-credentials") == nil)
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("Set-Cookie passes through to the client, and the proxy never stores or replays cookies")
    func cookiesNotStored() async throws {
        try await ProxyHarness.with(upstream: { head in
            head.uri.hasSuffix("/login")
                ? .respond(status: 200, headers: [("Set-Cookie", "session=abc; HttpOnly")], text: "ok") : .echo
        }) { proxy, _ in
            let login = try await TestClient.send(port: proxy.port, uri: "/api/login")
            #expect(login.header("set-cookie") == "session=abc; HttpOnly")
            let next = try await TestClient.send(port: proxy.port, uri: "/api/next")
            #expect(try next.echo().header("cookie") == nil)
        }
    }

    @Test("a redirect to another host is passed to the client, never followed with the token")
    func redirectToAnotherHost() async throws {
        try await withUpstream({ _ in .echo }) { elsewhere in
            let location = elsewhere.baseURL + "/steal"
            try await ProxyHarness.with(upstream: { _ in .respond(status: 307, headers: [("Location", location)]) }) {
                proxy, upstream in
                let response = try await TestClient.send(
                    port: proxy.port, method: "POST", uri: "/api/x", body: .text("{}"))
                #expect(response.status == .temporaryRedirect)
                #expect(response.header("location") == location)
                #expect(upstream.requests.count == 1)
                #expect(elsewhere.requests.isEmpty)
                #expect(elsewhere.acceptedConnections == 0)
            }
        }
    }
}
