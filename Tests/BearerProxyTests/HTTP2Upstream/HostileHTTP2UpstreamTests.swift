import Foundation
import NIOCore
import Testing

@testable import BearerDataPlane

/// HTTP/2's own attacks made by an upstream, on real sockets (``HostileHTTP2Upstream`` writes the frames by hand):
/// each ends the connection it came on — GOAWAY with the error the attack earns, the socket closed — the client
/// whose request it carried gets a `502` problem (or, once the answer's head has gone out, a cut answer), the proxy
/// holds no more than its limits let it (a bounded answer, never the bomb), and the next request goes on a new
/// connection and is served.
@Suite("A hostile HTTP/2 upstream is cut off, bounded, and never reused")
struct HostileHTTP2UpstreamTests {
    typealias Upstream = HostileHTTP2Upstream
    typealias Kind = HostileHTTP2Upstream.Kind

    /// HTTP/2 error codes (RFC 9113 §7).
    static let protocolError: UInt32 = 0x1, internalError: UInt32 = 0x2, flowControlError: UInt32 = 0x3
    static let frameSizeError: UInt32 = 0x6, compressionError: UInt32 = 0x9, enhanceYourCalm: UInt32 = 0xb

    /// Runs `body` with a hostile upstream playing `attack` (for `gathering` requests at once) and a proxy (one event
    /// loop, so one connection per origin) whose route `/api` speaks HTTP/2 to it with prior knowledge.
    static func with(
        settings: [(UInt16, UInt32)] = [], timeouts: ProxyTimeouts = ProxyTimeouts(), gathering: Int = 1,
        attack: @escaping Upstream.Attack = { _ in [] },
        _ body: (ProxyHarness, Upstream) async throws -> Void
    ) async throws {
        let upstream = try await Upstream.start(settings: settings, gathering: gathering, attack: attack)
        do {
            let routes = HTTP2UpstreamTests.route(to: upstream.baseURL, version: "h2", tls: false)
            try await ProxyHarness.with(routes: routes, timeouts: timeouts, threads: 1) { proxy in
                try await body(proxy, upstream)
            }
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }

    /// Sends `/api/attack`, expects `502` problem+json, the attacked connection ended with GOAWAY `code` and closed,
    /// the `5xx` counted, and a next request served on a new connection.
    static func expectCutOff(proxy: ProxyHarness, upstream: Upstream, goAway code: UInt32) async throws {
        let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
        #expect(response.status == .badGateway, "\(response.status) \(response.bodyText.prefix(200))")
        #expect(response.header("content-type") == "application/problem+json")
        try await expectConnectionEnded(upstream: upstream, goAway: code)
        try await expectNextServedOnNewConnection(proxy: proxy, upstream: upstream)
        let samples = try await OperationsTests.samples(port: proxy.port)
        #expect(samples[#"bearer_proxy_requests_total{method="GET",route="/api",status_class="5xx"}"#] == 1)
        #expect(try await endedConnections("connection_error", proxy: proxy) == 1)
    }

    /// `bearer_proxy_upstream_http2_connections_ended_total{reason=…}`: nil while none has ended so.
    static func endedConnections(_ reason: String, proxy: ProxyHarness) async throws -> Double? {
        let samples = try await OperationsTests.samples(port: proxy.port)
        return samples[#"bearer_proxy_upstream_http2_connections_ended_total{reason=""# + reason + #""}"#]
    }

    /// The first connection got GOAWAY `code` and was closed by the proxy.
    static func expectConnectionEnded(upstream: Upstream, goAway code: UInt32) async throws {
        try await upstream.waitClosed(1)
        let first = try #require(upstream.connections.first)
        #expect(first.goAway == code, "GOAWAY \(String(describing: first.goAway))")
    }

    /// A request after the attack is answered on a connection other than the attacked one.
    static func expectNextServedOnNewConnection(proxy: ProxyHarness, upstream: Upstream) async throws {
        let after = try await TestClient.send(port: proxy.port, uri: "/api/after")
        #expect(after.status == .ok)
        #expect(after.bodyText == "fine")
        let served = upstream.requests.last { $0.path.hasSuffix("/after") }
        #expect(served.map(\.connection) != 1, "the attacked connection was reused")
    }

    @Test("an HPACK bomb (one 4 KB field referenced 4,000 times: 16 MB decoded) is refused at the header list limit")
    func hpackBomb() async throws {
        try await Self.with(attack: { stream in
            // RFC 7541 §6.2.1: the field enters the dynamic table as entry 62; each 0xBE byte names it again.
            let block =
                Upstream.status200 + Upstream.literal("x-bomb", String(repeating: "a", count: 4_000), indexed: true)
                + [UInt8](repeating: 0xBE, count: 4_000)
            return Upstream.frame(Kind.headers, flags: Kind.endHeaders | Kind.endStream, stream: stream, block)
        }) { proxy, upstream in
            // The decoder stops at the limit (RFC 9113 §4.3: a header block that cannot be decoded is a
            // COMPRESSION_ERROR): 80 KiB decoded, never 16 MB.
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.compressionError)
        }
    }

    @Test("a response header list over the limit, in a HEADERS frame and 5 CONTINUATIONs, is refused unread")
    func headerListOverLimit() async throws {
        try await Self.with(attack: { stream in
            // 21 fields of 4 KB: 86 KB, over the 80 KiB limit, in 16 KiB frames (within the CONTINUATION limit).
            var block = Upstream.status200
            for index in 0..<21 { block += Upstream.literal("x-big-\(index)", String(repeating: "v", count: 4_090)) }
            var frames: [UInt8] = []
            var offset = 0
            while offset < block.count {
                let end = min(offset + HTTP2Connector.maximumFrameSize, block.count)
                let flags = end == block.count ? Kind.endHeaders : 0
                let kind = offset == 0 ? Kind.headers : Kind.continuation
                frames += Upstream.frame(
                    kind, flags: flags | (offset == 0 ? Kind.endStream : 0), stream: stream, Array(block[offset..<end]))
                offset = end
            }
            return frames
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.protocolError)
        }
    }

    @Test("a frame over SETTINGS_MAX_FRAME_SIZE (a 20 KB header section in one HEADERS frame) is a FRAME_SIZE_ERROR")
    func frameOverMaximumSize() async throws {
        try await Self.with(attack: { stream in
            // Within the header list limit, over the 16 KiB frame limit (RFC 9113 §4.2).
            let block = Upstream.status200 + Upstream.literal("x-pad", String(repeating: "p", count: 20_000))
            return Upstream.frame(Kind.headers, flags: Kind.endHeaders | Kind.endStream, stream: stream, block)
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.frameSizeError)
        }
    }

    @Test("a CONTINUATION flood (a header section that never ends) is cut off after 5 CONTINUATION frames")
    func continuationFlood() async throws {
        try await Self.with(attack: { stream in
            var frames = Upstream.frame(Kind.headers, stream: stream, Upstream.status200)
            let piece = Upstream.frame(Kind.continuation, stream: stream, Upstream.literal("a", "b"))
            for _ in 0..<10_000 { frames += piece }
            return frames
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.enhanceYourCalm)
        }
    }

    @Test(
        "SETTINGS and PING floods end the connection with ENHANCE_YOUR_CALM before the answer behind them is read",
        arguments: [Kind.settings, Kind.ping])
    func controlFrameFlood(kind: UInt8) async throws {
        try await Self.with(attack: { stream in
            let payload: [UInt8] = kind == Kind.ping ? Array(repeating: 7, count: 8) : []
            var frames: [UInt8] = []
            for _ in 0..<1_000 { frames += Upstream.frame(kind, stream: 0, payload) }
            return frames + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.enhanceYourCalm)
            // The answers it owed were bounded too: fewer ACKs than frames.
            let acks = upstream.connections[0].frames.filter { $0.type == kind && $0.flags & Kind.ack != 0 }
            #expect(acks.count < 1_000)
        }
    }

    @Test("an empty-DATA flood ends the connection with ENHANCE_YOUR_CALM; the answer it was part of is cut")
    func emptyDataFlood() async throws {
        try await Self.with(attack: { stream in
            var frames = Upstream.frame(Kind.headers, flags: Kind.endHeaders, stream: stream, Upstream.status200)
            for _ in 0..<1_000 { frames += Upstream.frame(Kind.data, stream: stream) }
            return frames + Upstream.frame(Kind.data, flags: Kind.endStream, stream: stream, Array("fine".utf8))
        }) { proxy, upstream in
            // The head may have gone to the client before the flood was counted: then the answer is cut, never whole.
            let response = try? await TestClient.send(port: proxy.port, uri: "/api/attack")
            #expect(response?.bodyText != "fine", "the flood's answer reached the client whole")
            try await Self.expectConnectionEnded(upstream: upstream, goAway: Self.enhanceYourCalm)
            try await Self.expectNextServedOnNewConnection(proxy: proxy, upstream: upstream)
        }
    }

    @Test("a WINDOW_UPDATE past 2^31-1 is a FLOW_CONTROL_ERROR of the connection")
    func windowOverflow() async throws {
        try await Self.with(attack: { stream in
            let increment: [UInt8] = [0x7f, 0xff, 0xff, 0xff]
            return Upstream.frame(Kind.windowUpdate, stream: 0, increment) + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.flowControlError)
        }
    }

    @Test(
        "a stream window that never opens: the upload stalls at the window, 504 at the body-stall limit, the connection retired"
    )
    func zeroWindow() async throws {
        var timeouts = ProxyTimeouts()
        timeouts.bodyStall = .seconds(1)
        // SETTINGS_INITIAL_WINDOW_SIZE 0 (RFC 9113 §6.5.2) and never a WINDOW_UPDATE; no answer either.
        try await Self.with(settings: [(0x4, 0)], timeouts: timeouts) { proxy, upstream in
            let response = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/api/attack", body: .stream(length: 4 << 20, chunked: false))
            #expect(response.status == .gatewayTimeout, "\(response.status)")
            #expect(response.header("content-type") == "application/problem+json")
            // Nothing beyond the protocol's first window went: the proxy held the rest back, not in memory.
            #expect(upstream.connections[0].bodyBytes <= HTTP2Connector.windowSize)
            try await upstream.waitClosed(1)
            try await Self.expectNextServedOnNewConnection(proxy: proxy, upstream: upstream)
        }
    }

    @Test("a PUSH_PROMISE though push is off is a PROTOCOL_ERROR of the connection")
    func pushPromise() async throws {
        try await Self.with(attack: { stream in
            // Promised stream 2, `GET /` over http from the static table (RFC 7541 Appendix A: 2, 4, 6).
            let promise: [UInt8] = [0, 0, 0, 2, 0x82, 0x84, 0x86] + Upstream.literal(":authority", "127.0.0.1")
            return Upstream.frame(Kind.pushPromise, flags: Kind.endHeaders, stream: stream, promise)
                + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.protocolError)
        }
    }

    @Test(
        "HEADERS on a stream the proxy never opened (even, or odd and idle) is a PROTOCOL_ERROR of the connection",
        arguments: [UInt32(2), UInt32(3)])
    func unopenedStream(id: UInt32) async throws {
        try await Self.with(attack: { stream in
            Upstream.frame(Kind.headers, flags: Kind.endHeaders | Kind.endStream, stream: id, Upstream.status200)
                + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            try await Self.expectCutOff(proxy: proxy, upstream: upstream, goAway: Self.protocolError)
        }
    }

    @Test("a flood of RST_STREAM frames for a stream already closed: past 2,000 in a second the connection is cut off")
    func resetFlood() async throws {
        let resets = HTTP2Connector.maximumResetsPerSecond + 500
        try await Self.with(attack: { stream in
            // The answer is whole first: the stream is closed when the resets come, and cost only their reading.
            Upstream.fine(stream: stream)
                + Array(repeating: Upstream.frame(Kind.rstStream, stream: stream, [0, 0, 0, 0]), count: resets)
                .flatMap { $0 }
        }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
            #expect(response.status == .ok)
            try await Self.expectConnectionEnded(upstream: upstream, goAway: Self.enhanceYourCalm)
            try await Self.expectNextServedOnNewConnection(proxy: proxy, upstream: upstream)
        }
    }

    /// A stream error ends one stream (RFC 9113 §5.4.2) and stops the connection taking new ones, so an upstream can
    /// cause as many as the proxy has streams open on it at once; past the limit the connection goes.
    @Test("a malformed answer on each of 250 streams open at once: past 200 stream errors, ENHANCE_YOUR_CALM")
    func streamErrorFlood() async throws {
        let streams = 250
        // SETTINGS_MAX_CONCURRENT_STREAMS 1,000 (RFC 9113 §6.5.2): every request fits on one connection.
        try await Self.with(
            settings: [(0x3, 1_000)], gathering: streams,
            attack: { stream in
                // A field name with an uppercase letter makes the response malformed (RFC 9113 §8.2.1, §8.1.1): a
                // stream error of type PROTOCOL_ERROR, the stream reset, the connection kept.
                let block = Upstream.status200 + Upstream.literal("X-Upper", "1")
                return Upstream.frame(Kind.headers, flags: Kind.endHeaders | Kind.endStream, stream: stream, block)
            }
        ) { proxy, upstream in
            // The connection is open, and knows the upstream's SETTINGS, before the requests come together.
            #expect(try await TestClient.send(port: proxy.port, uri: "/api/warm").status == .ok)
            let answers = try await withThrowingTaskGroup(of: (UInt, String?).self) { group in
                for _ in 0..<streams {
                    group.addTask {
                        let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
                        return (response.status.code, response.header("content-type"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == streams)
            #expect(answers.allSatisfy { $0 == (502, "application/problem+json") }, "\(Set(answers.map(\.0)))")
            #expect(upstream.requests.filter { $0.path.hasSuffix("/attack") }.allSatisfy { $0.connection == 1 })
            try await Self.expectConnectionEnded(upstream: upstream, goAway: Self.enhanceYourCalm)
            // Counted by what ended it first: the stream errors, not the GOAWAY their rate limit brought.
            #expect(try await Self.endedConnections("stream_error", proxy: proxy) == 1)
            #expect(try await Self.endedConnections("connection_error", proxy: proxy) == nil)
            try await Self.expectNextServedOnNewConnection(proxy: proxy, upstream: upstream)
        }
    }

    /// What nginx does to every stream it answers before the request's end, and gRPC servers to every call they finish
    /// first (RFC 9113 §8.1): a reset with NO_ERROR after a whole answer is not an attack, however many there are.
    /// `103` as a literal `:status` field (RFC 7541 §6.2.2: the static table has no 103).
    static let status103 = Upstream.literal(":status", "103")

    @Test("interim responses past 16 on a stream: the stream reset with ENHANCE_YOUR_CALM, 502, the connection kept")
    func interimFlood() async throws {
        let limit = HTTP2UpstreamFrameFilter.maximumInterimResponses
        try await Self.with(attack: { stream in
            var frames: [UInt8] = []
            for _ in 0...limit {
                frames += Upstream.frame(Kind.headers, flags: Kind.endHeaders, stream: stream, Self.status103)
            }
            return frames + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
            #expect(response.status == .badGateway, "\(response.status) \(response.bodyText.prefix(200))")
            #expect(response.header("content-type") == "application/problem+json")
            let resets = upstream.connections[0].frames.filter { $0.type == Kind.rstStream }
            #expect(resets.map(\.payload) == [[0, 0, 0, UInt8(Self.enhanceYourCalm)]], "\(resets.map(\.payload))")
            // A stream's fault: the connection serves on.
            let after = try await TestClient.send(port: proxy.port, uri: "/api/after")
            #expect(after.status == .ok && after.bodyText == "fine")
            #expect(upstream.connections.count == 1 && upstream.connections[0].goAway == nil)
        }
    }

    @Test(
        "16 interim responses, then the answer: served; WINDOW_UPDATE and PRIORITY frames for the stream change nothing"
    )
    func interimAndWindowUpdates() async throws {
        let limit = HTTP2UpstreamFrameFilter.maximumInterimResponses
        try await Self.with(attack: { stream in
            var frames: [UInt8] = []
            for _ in 0..<limit {
                frames += Upstream.frame(Kind.headers, flags: Kind.endHeaders, stream: stream, Self.status103)
            }
            let one: [UInt8] = [0, 0, 0, 1]
            for _ in 0..<2_000 { frames += Upstream.frame(Kind.windowUpdate, stream: stream, one) }
            // PRIORITY (type 2): exclusive bit clear, depends on stream 0, weight 16.
            for _ in 0..<100 { frames += Upstream.frame(2, stream: stream, [0, 0, 0, 0, 15]) }
            return frames + Upstream.fine(stream: stream)
        }) { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
            #expect(response.status == .ok)
            #expect(response.bodyText == "fine")
            #expect(upstream.connections[0].frames.filter { $0.type == Kind.rstStream }.isEmpty)
        }
    }

    @Test("an upstream that ends each answered stream with RST_STREAM NO_ERROR: 300 answers on one connection")
    func ordinaryResets() async throws {
        try await Self.with(attack: { stream in
            Upstream.fine(stream: stream) + Upstream.frame(Kind.rstStream, stream: stream, [0, 0, 0, 0])
        }) { proxy, upstream in
            for _ in 0..<300 {
                let response = try await TestClient.send(port: proxy.port, uri: "/api/attack")
                #expect(response.status == .ok)
                #expect(response.bodyText == "fine")
            }
            #expect(upstream.connections.count == 1)
            #expect(upstream.connections.first?.goAway == nil)
        }
    }

    @Test("a request without a body ends its stream with its HEADERS; one with a body, with its last DATA frame")
    func requestStreamEnds() async throws {
        // The GET must find the POST's connection: no idle PING (a third of the idle limit) may be waiting for its
        // ACK between the two, however slowly a busy machine runs the test.
        var timeouts = ProxyTimeouts()
        timeouts.upstreamIdle = .seconds(600)
        try await Self.with(timeouts: timeouts) { proxy, upstream in
            let posted = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/api/post", body: .text("hello"))
            #expect(posted.status == .ok)
            // On the connection open by now, the stream is there at once: the HEADERS go before the proxy has read
            // the client's end of the request.
            #expect(try await TestClient.send(port: proxy.port, uri: "/api/get").status == .ok)
            let frames = try #require(upstream.connections.first).frames
            func stream(_ suffix: String) throws -> [Upstream.Frame] {
                let id = try #require(upstream.requests.first { $0.path.hasSuffix(suffix) }).stream
                return frames.filter { $0.stream == id && ($0.type == Kind.headers || $0.type == Kind.data) }
            }
            let get = try stream("/get")
            #expect(get.count == 1)
            #expect(get.first.map { $0.type == Kind.headers && $0.flags & Kind.endStream != 0 } == true)
            let post = try stream("/post")
            #expect(post.first.map { $0.type == Kind.headers && $0.flags & Kind.endStream == 0 } == true)
            #expect(post.last.map { $0.type == Kind.data && $0.flags & Kind.endStream != 0 } == true)
            #expect(post.filter { $0.type == Kind.data }.reduce(0) { $0 + $1.payload.count } == 5)
        }
    }
}
