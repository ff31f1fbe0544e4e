import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import bench_floor_proxy

/// bench-floor-proxy end to end on 127.0.0.1: a raw upstream that records the bytes it gets, a raw client.
@Suite("bench-floor-proxy: what the upstream gets, on both codecs")
struct FloorProxyTests {
    static let token = "tok-123"

    @Test(
        "a GET: prefix stripped, hop-by-hop and the client's Authorization out, Host and Bearer in",
        arguments: [
            BenchFloorProxy.Codec.nio, .strict,
        ])
    func get(codec: BenchFloorProxy.Codec) async throws {
        try await Self.withProxy(codec: codec) { proxy, upstreamPort, upstream in
            let response = try await RawClient.exchange(
                proxy,
                "GET /bench/x?q=1 HTTP/1.1\r\nHost: proxy\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
                    + "Authorization: Basic eA==\r\nAccept: */*\r\n\r\n")
            #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(response.hasSuffix("\r\n\r\nok"))
            let received = try #require(upstream.requests.first)
            if codec == .strict {
                #expect(
                    received
                        == "GET /x?q=1 HTTP/1.1\r\nAccept: */*\r\nHost: 127.0.0.1:\(upstreamPort)\r\n"
                        + "Authorization: Bearer \(Self.token)\r\n\r\n")
            }
            let lower = received.lowercased()
            #expect(lower.hasPrefix("get /x?q=1 http/1.1\r\n"))
            #expect(lower.contains("authorization: bearer \(Self.token)\r\n"))
            #expect(lower.contains("host: 127.0.0.1:\(upstreamPort)\r\n"))
            for gone in ["basic", "x-hop", "connection", "host: proxy"] { #expect(!lower.contains(gone), "\(gone)") }
        }
    }

    @Test(
        "a chunked body reaches the upstream chunked, without the trailer fields",
        arguments: [
            BenchFloorProxy.Codec.nio, .strict,
        ])
    func chunked(codec: BenchFloorProxy.Codec) async throws {
        try await Self.withProxy(codec: codec) { proxy, _, upstream in
            let response = try await RawClient.exchange(
                proxy,
                "POST /bench/up HTTP/1.1\r\nHost: proxy\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n")
            #expect(response.hasSuffix("\r\n\r\nok"))
            let received = try #require(upstream.requests.first)
            #expect(received.hasSuffix("\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
            #expect(!received.contains("X-T"))
        }
    }

    @Test(
        "obs-fold never reaches the upstream; the strict codec answers 400",
        arguments: [
            BenchFloorProxy.Codec.nio, .strict,
        ])
    func obsFold(codec: BenchFloorProxy.Codec) async throws {
        try await Self.withProxy(codec: codec) { proxy, _, upstream in
            let response = try await RawClient.exchange(
                proxy, "GET /bench/x HTTP/1.1\r\nHost: proxy\r\nX: a\r\n b\r\n\r\n")
            if codec == .strict { #expect(response.hasPrefix("HTTP/1.1 400 ")) }
            #expect(upstream.requests.isEmpty)
        }
    }

    /// Runs `body` with the recording upstream and a floor proxy in front of it: `codec` for HTTP/1.1 clients, or
    /// `http2`'s shape for HTTP/2 ones.
    static func withProxy(
        codec: BenchFloorProxy.Codec, http2: H2Floor.Mode? = nil,
        _ body: (Harness, Int, RecordingUpstream) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = RecordingUpstream()
        let upstream = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RecordingUpstream.Handler(recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstreamPort = upstream.localAddress!.port!
        let configuration = ProxyConfiguration(
            upstream: try HostPort("127.0.0.1:\(upstreamPort)"), stripPrefix: "/bench",
            authorization: "Bearer \(token)")
        let proxy = try await FloorServer.bind(
            codec: codec, http2: http2, host: "127.0.0.1", port: 0, configuration: configuration, group: group
        ).get()
        do {
            try await body(Harness(group: group, proxyPort: proxy.localAddress!.port!), upstreamPort, recorder)
        } catch {
            try? await proxy.close()
            try? await upstream.close()
            try? await group.shutdownGracefully()
            throw error
        }
        try await proxy.close()
        try await upstream.close()
        try await group.shutdownGracefully()
    }
}

/// An upstream that records each request's bytes and answers `200 ok`. A request ends at its head's empty line, or,
/// when it says chunked, at the last chunk's.
final class RecordingUpstream: Sendable {
    private let received = Mutex<[String]>([])

    var requests: [String] { received.withLock { $0 } }

    final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let recorder: RecordingUpstream
        private var bytes = ""

        init(recorder: RecordingUpstream) {
            self.recorder = recorder
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += String(buffer: unwrapInboundIn(data))
            guard let headEnd = bytes.firstRange(of: "\r\n\r\n") else { return }
            if bytes[..<headEnd.lowerBound].lowercased().contains("chunked"), !bytes.hasSuffix("0\r\n\r\n") { return }
            let request = bytes
            bytes = ""
            recorder.received.withLock { $0.append(request) }
            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
        }
    }
}

/// Where the test's proxy listens, and the event loops the test's client may use (the proxy's own).
struct Harness {
    var group: EventLoopGroup
    var proxyPort: Int
}

/// A client that sends bytes and returns what came back once it ends in `ok` or the connection closes.
enum RawClient {
    static func exchange(_ harness: Harness, _ request: String) async throws -> String {
        let group = harness.group
        let port = harness.proxyPort
        let done = group.next().makePromise(of: String.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(channel.allocator.buffer(string: request))
        let response = try await done.futureResult.get()
        try? await channel.close()
        return response
    }

    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let done: EventLoopPromise<String>
        private var bytes = ""

        init(done: EventLoopPromise<String>) {
            self.done = done
        }

        private var finished = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += String(buffer: unwrapInboundIn(data))
            if bytes.hasSuffix("\r\n\r\nok") { finish() }
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish()
        }

        private func finish() {
            guard !finished else { return }
            finished = true
            done.succeed(bytes)
        }
    }
}
