import Foundation
import NIOCore
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

/// The connection cap's reserve for the health endpoint (docs/operations.md): at the cap, idle keep-alive connections —
/// HTTP/1.1 between requests, HTTP/2 with no stream open — close so that a new client, a health probe above all, gets
/// in, as nginx drains its reusable connections. Otherwise clients that hold connections open and send nothing keep
/// everyone else in the backlog until their idle limit (60 s).
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

    @Test("two idle HTTP/2 connections fill a cap of 2: each says GOAWAY and closes, and a third client gets in")
    func idleHTTP2ConnectionsMakeRoom() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#
            try await ProxyHarness.with(routes: routes, maximumConnections: 2) { proxy in
                var idle: [HTTP2TestClient] = []
                for _ in 0..<2 {
                    let client = try await HTTP2TestClient.connect(port: proxy.port)
                    #expect(try await client.send(HTTP2TestClient.request("GET", "/api/x")).status == 200)
                    idle.append(client)
                }
                let health = try await TestClient.send(port: proxy.port, uri: "/-/health", timeout: .seconds(20))
                #expect(health.status == .ok)
                for client in idle {
                    let channel = client.channel
                    try await withTimeout(waitingFor: "an idle HTTP/2 connection to close") {
                        try await channel.closeFuture.get()
                    }
                }
                #expect(try await TestClient.send(port: proxy.port, uri: "/api/y").status == .ok)
            }
        }
    }

    @Test("an HTTP/2 connection that has served a stream and has one open is never closed to make room")
    func busyHTTP2ConnectionKept() async throws {
        let answer: @Sendable (RawRequest) -> RawUpstream.Answer = { request in
            request.uri.hasSuffix("/held") ? .held : .respond(status: 200, body: "ok")
        }
        try await RawUpstream.with(answer: answer) { upstream in
            let routes = #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#
            try await ProxyHarness.with(routes: routes, maximumConnections: 2) { proxy in
                let client = try await HTTP2TestClient.connect(port: proxy.port)
                #expect(try await client.send(HTTP2TestClient.request("GET", "/api/first")).status == 200)
                async let held = client.send(HTTP2TestClient.request("GET", "/api/held"))
                try await upstream.waitForRequests(2)
                // A second client fills the cap with a connection that has sent nothing yet: the room is wanted now,
                // while the HTTP/2 connection has a stream open, and neither of the two may be closed for it.
                let silent = try await TestConnection.open(port: proxy.port)
                async let probe = TestClient.send(port: proxy.port, uri: "/-/health", timeout: .seconds(30))
                upstream.release(with: .respond(status: 200, body: "done"))
                let answer = try await held
                #expect(answer.status == 200)
                #expect(answer.reset == nil)
                #expect(answer.bodyText == "done")
                await silent.close()
                #expect(try await probe.status == .ok)
                await client.close()
            }
        }
    }

    @Test("a keep-alive connection busy with its second request is never closed to make room")
    func busyConnectionKept() async throws {
        let answer: @Sendable (RawRequest) -> RawUpstream.Answer = { request in
            request.uri.hasSuffix("/held") ? .held : .respond(status: 200, body: "ok")
        }
        try await RawUpstream.with(answer: answer) { upstream in
            let routes = #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#
            try await ProxyHarness.with(routes: routes, maximumConnections: 2) { proxy in
                let port = proxy.port
                let connection = try await TestConnection.open(port: port)
                #expect(try await connection.send(uri: "/api/first").status == .ok)
                async let held = connection.send(uri: "/api/held")
                try await upstream.waitForRequests(2)
                // A second client fills the cap with a connection that has sent nothing yet: the room is wanted now,
                // while the first is in the middle of an exchange, and neither of the two may be closed for it.
                let silent = try await TestConnection.open(port: port)
                async let probe = TestClient.send(port: port, uri: "/-/health", timeout: .seconds(30))
                upstream.release(with: .respond(status: 200, body: "done"))
                #expect(try await held.status == .ok)
                await silent.close()
                #expect(try await probe.status == .ok)
                await connection.close()
            }
        }
    }
}
