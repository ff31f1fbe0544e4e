import Foundation
import NIOHTTP1
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

@Suite("End to end: what the upstream receives, what the client gets back")
struct ForwardingEndToEndTests {
    @Test("the route's token is injected and the client's Authorization replaced; Host is the upstream's")
    func injectsToken() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/me", headers: [("Authorization", "Bearer from-the-client")])
            #expect(response.status == .ok)
            let echo = try response.echo()
            #expect(echo.headerValues("authorization").count == 1)
            let claims = try jwtClaims(echo.header("authorization"))
            #expect(claims["aud"] as? String == "api://api")
            #expect(claims["scp"] as? String == "Read")
            #expect(echo.header("host") == "127.0.0.1:\(upstream.port)")
            #expect(echo.uri == "/base/me")
        }
    }

    @Test("routes with different scope sets get different tokens; equal scope sets share one")
    func tokenPerScopeSet() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = """
                [ { "prefix": "/a", "upstream": "\(upstream.baseURL)", "scopes": ["api://one/Read"] },
                  { "prefix": "/b", "upstream": "\(upstream.baseURL)", "scopes": ["api://two/Read"] },
                  { "prefix": "/c", "upstream": "\(upstream.baseURL)", "scopes": ["api://one/Read"] } ]
                """
            try await ProxyHarness.with(routes: routes) { proxy in
                let a = try await TestClient.send(port: proxy.port, uri: "/a/x").echo().header("authorization")
                let b = try await TestClient.send(port: proxy.port, uri: "/b/x").echo().header("authorization")
                let c = try await TestClient.send(port: proxy.port, uri: "/c/x").echo().header("authorization")
                #expect(try jwtClaims(a)["aud"] as? String == "api://one")
                #expect(try jwtClaims(b)["aud"] as? String == "api://two")
                #expect(a != b)
                #expect(a == c)
            }
        }
    }

    @Test("hop-by-hop request headers (and those named in Connection) never reach the upstream")
    func stripsRequestHopByHop() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let request =
                "GET /api/x HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive, X-Private\r\nKeep-Alive: timeout=5\r\n"
                + "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic c2VjcmV0\r\nTE: trailers\r\n"
                + "Trailer: X-Checksum\r\nUpgrade: websocket\r\nX-Private: 1\r\nX-Public: 2\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: request, expectedResponses: 1)
            let echo = try #require(responses.first).echo()
            for name in [
                "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade",
                "x-private",
            ] {
                #expect(echo.header(name) == nil, "\(name) reached the upstream")
            }
            #expect(echo.header("x-public") == "2")
        }
    }

    @Test("hop-by-hop response headers (and those named in Connection) never reach the client")
    func stripsResponseHopByHop() async throws {
        let headers = [
            ("Connection", "X-Upstream-Private"), ("Keep-Alive", "timeout=5"), ("Proxy-Authenticate", "Basic"),
            ("Trailer", "X-Checksum"), ("Upgrade", "h2c"), ("X-Upstream-Private", "1"), ("X-Upstream-Public", "2"),
            ("Proxy-Connection", "keep-alive"),
        ]
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, headers: headers, text: "ok") }) {
            proxy, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .ok)
            for name in [
                "keep-alive", "proxy-authenticate", "trailer", "upgrade", "x-upstream-private", "proxy-connection",
            ] {
                #expect(response.header(name) == nil, "\(name) reached the client")
            }
            #expect(response.header("connection") == nil)
            #expect(response.header("x-upstream-public") == "2")
            #expect(response.bodyText == "ok")
        }
    }

    @Test("prefixes match whole segments, longest first; %2F and the query are forwarded byte for byte")
    func routing() async throws {
        try await withUpstream({ _ in .echo }) { first in
            try await withUpstream({ _ in .echo }) { second in
                let routes = """
                    [ { "prefix": "/api", "upstream": "\(first.baseURL)/one", "scopes": ["api://one/Read"] },
                      { "prefix": "/api/v2", "upstream": "\(second.baseURL)/two", "scopes": ["api://two/Read"] } ]
                    """
                try await ProxyHarness.with(routes: routes) { proxy in
                    let encoded = try await TestClient.send(port: proxy.port, uri: "/api/a%2Fb/c?q=%20x&y=%2F&&z")
                    #expect(try encoded.echo().uri == "/one/a%2Fb/c?q=%20x&y=%2F&&z")
                    let longest = try await TestClient.send(port: proxy.port, uri: "/api/v2/items")
                    #expect(try longest.echo().uri == "/two/items")
                    let exact = try await TestClient.send(port: proxy.port, uri: "/api")
                    #expect(try exact.echo().uri == "/one")
                    let boundary = try await TestClient.send(port: proxy.port, uri: "/apix/items")
                    #expect(boundary.status == .notFound)
                    #expect(boundary.header("content-type") == "application/problem+json")
                    let v2x = try await TestClient.send(port: proxy.port, uri: "/api/v2x")
                    #expect(try v2x.echo().uri == "/one/v2x")
                }
            }
        }
    }

    @Test("4xx and 5xx answers pass through unchanged, body included")
    func errorStatusesPassThrough() async throws {
        try await ProxyHarness.with(upstream: { head in
            head.uri.hasSuffix("teapot")
                ? .respond(status: 418, headers: [("X-Tea", "earl grey")], text: "I'm a teapot")
                : .respond(status: 503, headers: [("Retry-After", "7")], text: #"{"error":"maintenance"}"#)
        }) { proxy, _ in
            let teapot = try await TestClient.send(port: proxy.port, uri: "/api/teapot")
            #expect(teapot.status.code == 418)
            #expect(teapot.bodyText == "I'm a teapot")
            #expect(teapot.header("x-tea") == "earl grey")
            let unavailable = try await TestClient.send(port: proxy.port, uri: "/api/down")
            #expect(unavailable.status == .serviceUnavailable)
            #expect(unavailable.bodyText == #"{"error":"maintenance"}"#)
            #expect(unavailable.header("retry-after") == "7")
        }
    }

    @Test("a 302 is not followed; a Location into the upstream is rewritten to the local prefix")
    func redirectsPassThrough() async throws {
        let box = LocationBox()
        try await ProxyHarness.with(upstream: { head in
            head.uri.hasSuffix("/inside")
                ? .respond(status: 302, headers: [("Location", box.inside)])
                : .respond(status: 302, headers: [("Location", "https://elsewhere.example/x")])
        }) { proxy, upstream in
            box.set("\(upstream.baseURL)/base/users/1?tab=2")
            let inside = try await TestClient.send(port: proxy.port, uri: "/api/inside")
            #expect(inside.status == .found)
            #expect(inside.header("location") == "/api/users/1?tab=2")
            let outside = try await TestClient.send(port: proxy.port, uri: "/api/outside")
            #expect(outside.status == .found)
            #expect(outside.header("location") == "https://elsewhere.example/x")
            // Not followed: the upstream saw exactly the two requests the client made.
            #expect(upstream.requests.count == 2)
        }
    }

    @Test("HEAD keeps Content-Length and has no body; HTTP/1.0 clients get a complete answer")
    func headAndHTTP10() async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, text: "twelve bytes") }) { proxy, _ in
            let head = try await TestClient.send(port: proxy.port, method: "HEAD", uri: "/api/x")
            #expect(head.status == .ok)
            #expect(head.header("content-length") == "12")
            #expect(head.bodyLength == 0)
            let old = try await TestClient.send(port: proxy.port, uri: "/api/x", version: .http1_0)
            #expect(old.status == .ok)
            #expect(old.bodyText == "twelve bytes")
            #expect(old.version == .http1_0)
        }
    }

    @Test("pipelined requests are answered in order")
    func pipelining() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let requests = (1...3).map { "GET /api/\($0) HTTP/1.1\r\nHost: localhost\r\n\r\n" }.joined()
            let responses = try await TestClient.raw(port: proxy.port, text: requests, expectedResponses: 3)
            #expect(try responses.map { try $0.echo().uri } == ["/base/1", "/base/2", "/base/3"])
        }
    }

    @Test("keep-alive on both sides: requests on one client connection reuse one upstream connection")
    func keepAlive() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let connection = try await TestConnection.open(port: proxy.port)
            for index in 1...5 {
                let response = try await connection.send(uri: "/api/\(index)")
                #expect(response.status == .ok)
            }
            await connection.close()
            #expect(upstream.acceptedConnections == 1)
        }
    }

    @Test("every response carries an X-Request-Id, the client's own when it sent one")
    func requestIDs() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let kept = try await TestClient.send(
                port: proxy.port, uri: "/api/x", headers: [("X-Request-Id", "abc-123")])
            #expect(kept.header("x-request-id") == "abc-123")
            #expect(try kept.echo().header("x-request-id") == "abc-123")
            let generated = try await TestClient.send(port: proxy.port, uri: "/nowhere")
            #expect(generated.status == .notFound)
            #expect(generated.header("x-request-id")?.isEmpty == false)
            let problem = try generated.jsonObject()
            #expect(problem["requestId"] as? String == generated.header("x-request-id"))
        }
    }

    @Test("a route's methods list is enforced with 405 and Allow; auth none sends no token")
    func methodsAndNoAuth() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = """
                [ { "prefix": "/read", "upstream": "\(upstream.baseURL)", "scopes": ["api://a/Read"], "methods": ["GET"] },
                  { "prefix": "/open", "upstream": "\(upstream.baseURL)", "auth": "none" } ]
                """
            try await ProxyHarness.with(routes: routes) { proxy in
                let refused = try await TestClient.send(port: proxy.port, method: "DELETE", uri: "/read/x")
                #expect(refused.status == .methodNotAllowed)
                #expect(refused.header("allow") == "GET")
                let open = try await TestClient.send(
                    port: proxy.port, uri: "/open/x", headers: [("Authorization", "Bearer client")])
                #expect(try open.echo().header("authorization") == nil)
                #expect(upstream.requests.count == 1)
            }
        }
    }

    @Test("a TLS upstream is reached through the configured CA file; without it the certificate is refused")
    func tlsUpstream() async throws {
        try await withUpstream(tls: true, { _ in .echo }) { upstream in
            let routes = """
                [ { "prefix": "/trusted", "upstream": "\(upstream.baseURL)/t", "scopes": ["api://t/Read"],
                    "tls": { "caFile": "\(TLSFixtures.caFile)" } },
                  { "prefix": "/untrusted", "upstream": "\(upstream.baseURL)/u", "scopes": ["api://t/Read"] } ]
                """
            try await ProxyHarness.with(routes: routes) { proxy in
                let trusted = try await TestClient.send(port: proxy.port, uri: "/trusted/me")
                #expect(trusted.status == .ok, "\(trusted.bodyText)")
                #expect(try trusted.echo().uri == "/t/me")
                #expect(try jwtClaims(trusted.echo().header("authorization"))["aud"] as? String == "api://t")
                let untrusted = try await TestClient.send(port: proxy.port, uri: "/untrusted/me")
                #expect(untrusted.status == .badGateway)
                #expect(untrusted.header("content-type") == "application/problem+json")
                // The token never left: the only request the upstream completed is the trusted one.
                #expect(upstream.requests.count == 1)
            }
        }
    }
}

/// Lets a test hand a value to an upstream behaviour that was created before the value was known.
final class LocationBox: Sendable {
    private let value = Mutex("")
    var inside: String { value.withLock { $0 } }
    func set(_ location: String) { value.withLock { $0 = location } }
}
