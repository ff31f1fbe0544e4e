import Foundation
import NIOCore
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

@Suite("End to end: the proxy's own failures are problem+json")
struct FailureTests {
    @Test("an upstream that refuses connections gives 502 at once, not after the connect timeout")
    func upstreamDown() async throws {
        let refusing = try RefusingPort()
        let port = refusing.port
        let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:\#(port)", "scopes": ["api://a/R"] } ]"#
        // A connect timeout far beyond the client's limit: an answer within the limit can only come from the refused
        // connect itself, however loaded the machine (on a quiet one it takes milliseconds).
        var timeouts = ProxyTimeouts()
        timeouts.connect = .seconds(600)
        try await ProxyHarness.with(routes: routes, timeouts: timeouts) { proxy in
            defer { withExtendedLifetime(refusing) {} }
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x", timeout: .seconds(60))
            #expect(response.status == .badGateway)
            #expect(response.header("content-type") == "application/problem+json")
            let problem = try response.jsonObject()
            #expect(problem["status"] as? Int == 502)
            #expect(problem["type"] as? String == "urn:bearer-proxy:problem:upstream-unreachable")
            #expect((problem["detail"] as? String)?.contains("127.0.0.1:\(port)") == true)
            #expect(problem["title"] != nil)
        }
    }

    @Test("an upstream that never answers gives 504 at the route's timeout")
    func upstreamSilent() async throws {
        try await ProxyHarness.with(upstream: { _ in .silent }, route: #""timeoutSeconds": 0.3"#) { proxy, _ in
            // The token first: the route's timeout also bounds the wait for it, and this test is about the upstream.
            _ = try await proxy.proxy.tokens.accessTokenWithinLimit(for: ScopeSet(["api://api/Read"]))
            let started = ContinuousClock.now
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .gatewayTimeout)
            #expect(try response.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:upstream-timeout")
            // Not before the configured timeout (a lower bound only; upper bounds are the client's timeout).
            #expect(ContinuousClock.now - started >= .milliseconds(300))
        }
    }

    @Test("an upstream that closes without answering gives 502")
    func upstreamReset() async throws {
        try await ProxyHarness.with(upstream: { _ in .closeImmediately }) { proxy, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .badGateway)
            #expect(try response.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:upstream-reset")
        }
    }

    @Test(
        "unsafe paths are refused with 400 before any routing",
        arguments: ["/api/../admin", "/api/%2e%2e/admin", "/api/..%2fadmin", "/api/a%00b"])
    func unsafePaths(_ path: String) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: path)
            #expect(response.status == .badRequest)
            #expect(response.header("content-type") == "application/problem+json")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("CONNECT gets 405")
    func connectRefused() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                expectedResponses: 1)
            #expect(responses.first?.status == .methodNotAllowed)
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("a request that is not valid HTTP gets a 400 problem and the connection closes")
    func malformedRequest() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "GET /api/x HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n",
                expectedResponses: 1)
            #expect(responses.first?.status == .badRequest)
            #expect(responses.first?.header("content-type") == "application/problem+json")
            #expect(responses.first?.header("connection") == "close")
        }
    }
}
