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

/// The client connection's time limits, which share one timer (``ProxyConnectionHandler/armTimer(for:)``): the
/// idle keep-alive limit between exchanges and the request-head and body-stall limits (``IdleConnectionTests``,
/// ``RequestTimeLimitTests``, on the event loop's own clock), and here on real sockets each request's response-head
/// limit, the wait for its token, and a slow client's `408`.
@Suite("End to end: a client connection's time limits")
struct ConnectionTimeLimitTests {
    @Test("a request with a shorter response limit than the one before it on the connection times out at its own")
    func shorterLimitLater() async throws {
        try await withUpstream({ head in head.uri.contains("silent") ? .silent : .echo }) { upstream in
            let routes = #"""
                [ { "prefix": "/patient", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] },
                  { "prefix": "/quick", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"],
                    "timeoutSeconds": 0.3 } ]
                """#
            try await ProxyHarness.with(routes: routes) { proxy in
                let connection = try await TestConnection.open(port: proxy.port)
                #expect(try await connection.send(uri: "/patient/echo").status == .ok)
                // The connection's timer was last armed for 60 s (the idle limit, the first route's limit); this
                // request's 0.3 s must bring it forward. The client gives up after 5 s.
                let started = ContinuousClock.now
                let response = try await connection.send(uri: "/quick/silent", timeout: .seconds(5))
                #expect(response.status == .gatewayTimeout)
                #expect(ContinuousClock.now - started >= .milliseconds(300))
                #expect(try await connection.send(uri: "/patient/echo").status == .ok)
                await connection.close()
            }
        }
    }

    /// Short client-side limits, so that a real socket reaches them quickly.
    static var quick: ProxyTimeouts {
        var timeouts = ProxyTimeouts()
        timeouts.requestHead = .milliseconds(300)
        timeouts.bodyStall = .milliseconds(300)
        return timeouts
    }

    @Test("a client that never finishes its request head gets 408 and is disconnected; the upstream sees nothing")
    func slowHead() async throws {
        try await RawUpstream.withProxy(timeouts: Self.quick) { proxy, upstream in
            let responses = try await TestClient.raw(
                port: proxy.port, text: "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", expectedResponses: 1,
                timeout: .seconds(10))
            #expect(responses.first?.status == .requestTimeout)
            #expect(try responses.first?.jsonObject()["status"] as? Int == 408)
            #expect(upstream.acceptedConnections == 0)
        }
    }

    @Test("a request body that stops before its length gets 408 and the upstream connection is not reused")
    func stalledBody() async throws {
        try await RawUpstream.withProxy(timeouts: Self.quick) { proxy, upstream in
            let responses = try await TestClient.raw(
                port: proxy.port,
                text: "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nonly this much",
                expectedResponses: 1, requestMethods: ["POST"], timeout: .seconds(10))
            #expect(responses.first?.status == .requestTimeout)
            #expect(responses.first?.header("connection") == "close")
            // The upstream got a head and part of a body it will never see the end of: that connection is closed.
            try await upstream.waitForAcceptedConnections(1)
            try await upstream.waitForClosedConnections(1)
            #expect(upstream.acceptedConnections == 1)
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("the route's timeout bounds the wait for its token: 503 with Retry-After; the token request goes on")
    func slowToken() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bp-slow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let runs = directory.appendingPathComponent("runs").path
        // A provider that takes 2 s; the route /quick allows 0.3 s. /patient shares its scope set (and so its
        // token) with the default limit, so that its answer does not race a short limit on a busy machine.
        let account = """
            { "flow": "command", "command": ["sh", "-c", "echo run >> '\(runs)'; sleep 2; echo slow-token"] }
            """
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = #"""
                [ { "prefix": "/quick", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"],
                    "timeoutSeconds": 0.3 },
                  { "prefix": "/patient", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] } ]
                """#
            try await ProxyHarness.with(routes: routes, account: account) { proxy in
                let first = try await TestClient.send(port: proxy.port, uri: "/quick/x", timeout: .seconds(10))
                #expect(first.status == .serviceUnavailable)
                #expect(first.header("retry-after") == "1")
                #expect(try first.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:token-unavailable")
                #expect(upstream.requests.isEmpty)
                // The answered exchange has ended: its generation counts it out now, though the token request it
                // started runs on for 2 s — not when the last reference to its record goes (#23).
                let generation = try #require(proxy.proxy.current.context)
                try await waitUntil("the answered exchange counted out", timeout: .seconds(1)) {
                    !generation.hasExchanges
                }
                // The one token request carried on: waiting for it joins it rather than starting another.
                _ = try await proxy.proxy.tokens.accessTokenWithinLimit(for: ScopeSet(["api://a/R"]))
                let second = try await TestClient.send(port: proxy.port, uri: "/patient/x")
                #expect(second.status == .ok)
                #expect(try second.echo().header("authorization") == "Bearer slow-token")
                let count = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").count
                #expect(count == 1, "the provider was asked \(count) times")
            }
        }
    }
}
