import NIOCore
import Testing

@testable import BearerDataPlane

/// An idle HTTP/2 upstream connection is probed with PING (RFC 9113 §6.7) and retired with GOAWAY at the idle limit
/// (RFC 9113 §6.8), on real sockets with the idle limit shortened through ``ProxyTimeouts/upstreamIdle``: 3 s, so a
/// PING after 1 s of idleness whose ACK is due within 0.5 s.
@Suite("Idle HTTP/2 upstream connections are probed with PING and retired")
struct IdleHTTP2UpstreamTests {
    static var timeouts: ProxyTimeouts {
        var timeouts = ProxyTimeouts()
        timeouts.upstreamIdle = .seconds(3)
        return timeouts
    }

    @Test("an idle connection whose upstream stops answering PING is closed; the next request opens a new one")
    func silentUpstreamIsClosed() async throws {
        try await HostileHTTP2UpstreamTests.with(timeouts: Self.timeouts) { proxy, upstream in
            let first = try await TestClient.send(port: proxy.port, uri: "/api/one")
            #expect(first.bodyText == "fine")
            upstream.acknowledgesPings = false
            try await upstream.waitClosed(1)
            let silent = try #require(upstream.connections.first)
            #expect(silent.pings >= 1, "closed without a PING")
            // Closed for its silence, not at the idle limit (that one says GOAWAY first).
            #expect(silent.goAway == nil, "GOAWAY \(String(describing: silent.goAway)): closed at the idle limit")
            #expect(try await HostileHTTP2UpstreamTests.endedConnections("ping_timeout", proxy: proxy) == 1)
            upstream.acknowledgesPings = true
            let second = try await TestClient.send(port: proxy.port, uri: "/api/two")
            #expect(second.bodyText == "fine")
            #expect(upstream.requests.map(\.connection) == [1, 2])
        }
    }

    @Test("a connection whose PING awaits its ACK takes no request: the next one opens a new connection")
    func noRequestWhileAckAwaited() async throws {
        var timeouts = ProxyTimeouts()
        // 12 s: a PING after 4 s of idleness, its ACK due within 2 s: time enough for a request meanwhile, and for a
        // new upstream connection's handshake, on a machine busy with other suites.
        timeouts.upstreamIdle = .seconds(12)
        try await HostileHTTP2UpstreamTests.with(timeouts: timeouts) { proxy, upstream in
            let first = try await TestClient.send(port: proxy.port, uri: "/api/one")
            #expect(first.bodyText == "fine")
            upstream.acknowledgesPings = false
            try await upstream.wait(for: "a PING on the idle connection") {
                ($0.connections.first?.pings ?? 0) >= 1
            }
            let second = try await TestClient.send(port: proxy.port, uri: "/api/two")
            #expect(second.bodyText == "fine")
            // The request came while the ACK was awaited: the silent connection was still open.
            #expect(upstream.connections.first?.closed == false, "closed before the request came")
            #expect(upstream.requests.map(\.connection) == [1, 2])
            try await upstream.waitClosed(1)
        }
    }

    @Test("an idle connection whose upstream answers PING is kept for the next request, then retired with GOAWAY")
    func answeringUpstreamIsKeptThenRetired() async throws {
        try await HostileHTTP2UpstreamTests.with(timeouts: Self.timeouts) { proxy, upstream in
            let first = try await TestClient.send(port: proxy.port, uri: "/api/one")
            #expect(first.bodyText == "fine")
            try await upstream.wait(for: "a PING on the idle connection") {
                ($0.connections.first?.pings ?? 0) >= 1
            }
            let second = try await TestClient.send(port: proxy.port, uri: "/api/two")
            #expect(second.bodyText == "fine")
            try await upstream.waitClosed(1)
            let retired = try #require(upstream.connections.first)
            #expect(retired.goAway == 0, "GOAWAY \(String(describing: retired.goAway)), not NO_ERROR")
            #expect(try await HostileHTTP2UpstreamTests.endedConnections("idle", proxy: proxy) == 1)
            let third = try await TestClient.send(port: proxy.port, uri: "/api/three")
            #expect(third.bodyText == "fine")
            #expect(upstream.requests.map(\.connection) == [1, 1, 2])
        }
    }
}
