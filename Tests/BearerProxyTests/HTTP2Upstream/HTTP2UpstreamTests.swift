import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization
import Testing

@testable import BearerDataPlane

/// Routes whose `upstreamProtocol` is `h2` or `auto`, to HTTP/2 upstreams on real sockets: HTTP/1.1 and HTTP/2
/// clients, one connection multiplexing the exchanges, bodies both ways, GOAWAY, resets, and the token rules.
@Suite("HTTP/2 upstreams: requests reach them over HTTP/2 with the route's token")
struct HTTP2UpstreamTests {
    /// A route `/api` to `upstream` speaking `version`, trusting the fixture CA when it is TLS.
    static func route(to baseURL: String, version: String, tls: Bool) -> String {
        let ca = tls ? #", "tls": { "caFile": "\#(TLSFixtures.caFile)" }"# : ""
        return #"[{ "prefix": "/api", "upstream": "\#(baseURL)/base", "scopes": ["api://api/Read"], "#
            + #""upstreamProtocol": "\#(version)"\#(ca) }]"#
    }

    /// Runs `body` with an HTTP/2 upstream answering by `answer` and a proxy whose route speaks `version` to it. The
    /// proxy runs one event loop: connections are per origin and loop, so the upstream's count of them is exact.
    static func with(
        tls: Bool = false, version: String = "h2",
        answer: @escaping @Sendable (FakeHTTP2Upstream.Request) -> FakeHTTP2Upstream.Answer,
        _ body: (ProxyHarness, FakeHTTP2Upstream) async throws -> Void
    ) async throws {
        let upstream = try await FakeHTTP2Upstream.start(tls: tls, answer: answer)
        do {
            let routes = route(to: upstream.baseURL, version: version, tls: tls)
            try await ProxyHarness.with(routes: routes, threads: 1) { proxy in
                try await body(proxy, upstream)
            }
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }

    static let ok: @Sendable (FakeHTTP2Upstream.Request) -> FakeHTTP2Upstream.Answer = { request in
        .respond(status: 200, fields: [("x-path", request.path)], body: ByteBuffer(string: "hello over h2"))
    }

    @Test("an HTTP/1.1 client to an h2c upstream (prior knowledge): the route's token on the stream, the answer back")
    func http1ClientToH2C() async throws {
        try await Self.with(answer: Self.ok) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/hello?x=1", headers: [("authorization", "Bearer stolen")])
            #expect(response.status == .ok)
            #expect(response.bodyText == "hello over h2")
            #expect(response.header("x-path") == "/base/hello?x=1")
            let request = try #require(upstream.requests.first)
            #expect(request.header(":method") == "GET")
            #expect(request.header(":scheme") == "http")
            #expect(request.header(":authority") == "127.0.0.1:\(upstream.port)")
            #expect(request.headers[canonicalForm: "authorization"].count == 1)
            let claims = try jwtClaims(request.header("authorization"))
            #expect(claims["aud"] as? String == "api://api")
            for name in ["connection", "host", "keep-alive", "transfer-encoding"] {
                #expect(request.header(name) == nil, "\(name) sent over HTTP/2")
            }
        }
    }

    @Test("an HTTP/2 client to an h2c upstream: HTTP/2 end to end, the token on the upstream's stream")
    func http2ClientToH2C() async throws {
        try await Self.with(answer: Self.ok) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let response = try await client.send(HTTP2TestClient.request("GET", "/api/two"))
            await client.close()
            #expect(response.status == 200)
            #expect(response.bodyText == "hello over h2")
            let request = try #require(upstream.requests.first)
            #expect(request.path == "/base/two")
            _ = try jwtClaims(request.header("authorization"))
        }
    }

    @Test("h2 over TLS: ALPN h2, the fixture CA trusted, the token on the stream")
    func h2OverTLS() async throws {
        try await Self.with(tls: true, answer: Self.ok) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/secure")
            #expect(response.status == .ok, "\(response.bodyText)")
            #expect(response.bodyText == "hello over h2")
            let request = try #require(upstream.requests.first)
            #expect(request.header(":scheme") == "https")
            _ = try jwtClaims(request.header("authorization"))
        }
    }

    @Test("auto picks h2 when the server's ALPN says h2")
    func autoPicksH2() async throws {
        try await Self.with(tls: true, version: "auto", answer: Self.ok) { proxy, upstream in
            for path in ["/api/a", "/api/b"] {
                let response = try await TestClient.send(port: proxy.port, uri: path)
                #expect(response.status == .ok)
            }
            #expect(upstream.requests.count == 2)
            #expect(upstream.connections == 1)
        }
    }

    @Test("auto speaks HTTP/1.1 when the server offers only HTTP/1.1")
    func autoFallsBackToHTTP1() async throws {
        try await withUpstream(tls: true, { _ in .respond(status: 200, body: Array("one".utf8)) }) { upstream in
            let routes = Self.route(to: upstream.baseURL, version: "auto", tls: true)
            try await ProxyHarness.with(routes: routes) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                #expect(response.status == .ok, "\(response.bodyText)")
                #expect(response.bodyText == "one")
            }
            let request = try #require(upstream.requests.first)
            #expect(request.head.version == .http1_1)
            _ = try jwtClaims(request.head.headers["authorization"].first)
        }
    }

    @Test("h2 over TLS to a server that does not pick h2 is a 502, never HTTP/1.1")
    func h2RefusesHTTP1Server() async throws {
        try await withUpstream(tls: true, { _ in .respond(status: 200, body: Array("one".utf8)) }) { upstream in
            let routes = Self.route(to: upstream.baseURL, version: "h2", tls: true)
            try await ProxyHarness.with(routes: routes) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                #expect(response.status == .badGateway)
            }
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("60 concurrent requests from 60 client connections share one upstream connection, each with the token")
    func concurrentRequestsShareOneConnection() async throws {
        try await Self.with(answer: Self.ok) { proxy, upstream in
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<60 {
                    group.addTask { try await TestClient.send(port: proxy.port, uri: "/api/n/\(index)").status.code }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 60))
            #expect(upstream.requests.count == 60)
            #expect(upstream.connections == 1)
            #expect(upstream.requests.allSatisfy { $0.header("authorization")?.hasPrefix("Bearer ") == true })
        }
    }

    @Test("a 1 MiB upload arrives whole; an 8 MiB download arrives whole")
    func bodiesBothWays() async throws {
        let download = ByteBuffer(repeating: 0x61, count: 8 << 20)
        try await Self.with(answer: { request in
            request.path.hasSuffix("/down")
                ? .respond(status: 200, body: download)
                : .respond(status: 201, body: ByteBuffer(string: "\(request.bodyLength)"))
        }) { proxy, upstream in
            let upload = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/api/up", body: .stream(length: 1 << 20, chunked: true))
            #expect(upload.status == .created)
            #expect(upload.bodyText == "\(1 << 20)")
            let down = try await TestClient.send(port: proxy.port, uri: "/api/down")
            #expect(down.status == .ok)
            #expect(down.bodyLength == 8 << 20)
        }
    }

    @Test("a client that never reads its 32 MiB download stalls only its own stream: others on the connection go on")
    func slowClientStallsOnlyItsStream() async throws {
        let (started, slowStarted) = AsyncStream<Void>.makeStream()
        let big = ByteBuffer(repeating: 0x62, count: 32 << 20)
        try await Self.with(answer: { request in
            guard request.path.hasSuffix("/slow") else { return Self.ok(request) }
            slowStarted.yield()
            return .respond(status: 200, body: big)
        }) { proxy, upstream in
            // A client that sends its request and never reads: NIO issues no read without autoRead. Its socket fills,
            // the proxy stops reading the stream, and the upstream stops at the stream's window.
            let deaf = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.autoRead, value: false)
                .connect(host: "127.0.0.1", port: proxy.port).get()
            try await deaf.writeAndFlush(
                ByteBuffer(string: "GET /api/slow HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n")
            ).get()
            for await _ in started { break }
            let sent = try await DownloadBackpressureTests.bytesWhenStalled(
                { upstream.bodyBytesWritten }, total: big.readableBytes)
            #expect(sent < big.readableBytes / 2, "the proxy read \(sent) bytes of a body its client never read")
            for index in 0..<5 {
                let response = try await TestClient.send(port: proxy.port, uri: "/api/fast/\(index)")
                #expect(response.status == .ok)
            }
            // The stalled stream holds what its window let through, not the body: the upstream has not written it all.
            #expect(!upstream.answered.contains("/base/slow"), "the proxy read a body its client never read")
            try await deaf.close()
            #expect(upstream.connections == 1, "the fast requests did not share the stalled stream's connection")
        }
    }

    @Test("response trailers reach an HTTP/1.1 client as the chunked body's trailer section")
    func trailers() async throws {
        try await Self.with(answer: { _ in
            .respond(status: 200, body: ByteBuffer(string: "body"), trailers: [("grpc-status", "0")])
        }) { proxy, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/t")
            #expect(response.status == .ok)
            #expect(response.bodyText == "body")
            #expect(response.trailers?.first(name: "grpc-status") == "0")
        }
    }

    @Test("the upstream's GOAWAY: the request it answered is served, the next ones go on a new connection")
    func goAway() async throws {
        try await Self.with(answer: { request in
            request.path.hasSuffix("/last") ? .respondThenGoAway(status: 200) : Self.ok(request)
        }) { proxy, upstream in
            let connection = try await TestConnection.open(port: proxy.port)
            for path in ["/api/a", "/api/last", "/api/b", "/api/c"] {
                let response = try await connection.send(uri: path)
                #expect(response.status == .ok, "\(path)")
            }
            await connection.close()
            #expect(upstream.requests.map(\.path) == ["/base/a", "/base/last", "/base/b", "/base/c"])
            #expect(upstream.requests.map(\.connection) == [1, 1, 2, 2])
            #expect(try await HostileHTTP2UpstreamTests.endedConnections("goaway", proxy: proxy) == 1)
        }
    }

    @Test("a stream the upstream resets is a 502 problem; the connection serves the next request")
    func resetStream() async throws {
        try await Self.with(answer: { request in
            request.path.hasSuffix("/reset") ? .reset(.internalError) : Self.ok(request)
        }) { proxy, upstream in
            let reset = try await TestClient.send(port: proxy.port, uri: "/api/reset")
            #expect(reset.status == .badGateway)
            #expect(reset.header("content-type") == "application/problem+json")
            let after = try await TestClient.send(port: proxy.port, uri: "/api/after")
            #expect(after.status == .ok)
        }
    }

    @Test("a stream refused with REFUSED_STREAM was never processed: sent again, answered")
    func refusedStreamReplayed() async throws {
        let refusals = Atomic<Int>(0)
        try await Self.with(answer: { request in
            refusals.add(1, ordering: .relaxed).oldValue == 0 ? .reset(.refusedStream) : Self.ok(request)
        }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/again")
            #expect(response.status == .ok)
            #expect(upstream.requests.map(\.path) == ["/base/again", "/base/again"])
        }
    }

    @Test("a WebSocket handshake cannot go over HTTP/2: 502, nothing sent")
    func upgradeRefused() async throws {
        try await Self.with(answer: Self.ok) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, uri: "/api/ws",
                headers: [
                    ("connection", "upgrade"), ("upgrade", "websocket"), ("sec-websocket-version", "13"),
                    ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ])
            #expect(response.status == .badGateway)
            #expect(upstream.requests.isEmpty)
        }
    }
}
