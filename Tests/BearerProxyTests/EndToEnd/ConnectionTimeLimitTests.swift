import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import BearerProxy

/// The client connection's time limits, which share one timer (``ProxyConnectionHandler/armTimer(for:)``): the
/// idle keep-alive limit between exchanges (``IdleConnectionTests``, on the event loop's own clock), and each
/// request's response-head limit, here on real sockets.
@Suite("End to end: a client connection's idle and response-head limits")
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
}
