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

/// #22 item 2's reserve, for the health endpoint: at the connection cap, idle keep-alive connections close so that
/// a new client — a health probe above all — gets in, as nginx drains its reusable connections. Before, clients that
/// held connections open and sent nothing kept everyone else in the backlog until their idle limit (60 s).
@Suite("At the connection cap, idle keep-alive connections make room for new clients")
struct IdleDrainTests {
    @Test("two idle keep-alives fill a cap of 2: /-/health from a third client is answered, an idle one is closed")
    func healthGetsIn() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#
            try await ProxyHarness.with(routes: routes, maximumConnections: 2) { proxy in
                let port = proxy.port
                var idle: [TestConnection] = []
                for _ in 0..<2 {
                    let connection = try await TestConnection.open(port: port)
                    #expect(try await connection.send(uri: "/api/x").status == .ok)
                    idle.append(connection)
                }
                // Both are idle between requests, at the cap. A third client's probe must not wait 60 s for them.
                let health = try await TestClient.send(port: port, uri: "/-/health", timeout: .seconds(20))
                #expect(health.status == .ok)
                try await idle[0].waitForClose()
                try await idle[1].waitForClose()
                // And the proxy goes on serving at its cap.
                #expect(try await TestClient.send(port: port, uri: "/api/y").status == .ok)
            }
        }
    }

    @Test("a connection in the middle of an exchange is never closed to make room")
    func busyConnectionKept() async throws {
        try await RawUpstream.with(answer: GenerationTests.holdFirst) { upstream in
            let routes = #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#
            try await ProxyHarness.with(routes: routes, maximumConnections: 1) { proxy in
                let port = proxy.port
                async let held = TestClient.send(port: port, uri: "/api/held")
                try await upstream.waitForRequests(1)
                // At the cap with one busy connection: a second client waits in the backlog, and the busy exchange
                // is not cut short to let it in.
                async let probe = TestClient.send(port: port, uri: "/-/health", timeout: .seconds(30))
                upstream.release(with: .respond(status: 200, body: "done"))
                #expect(try await held.status == .ok)
                #expect(try await probe.status == .ok)
            }
        }
    }
}
