import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// #23 item 5: the client connection's handler talks to its upstream only through ``UpstreamConnector`` and
/// ``UpstreamConnection``. Here a transport that is no NIO pipeline at all — an in-memory one, as an HTTP/2 stream
/// would be — carries proxied requests through the real client pipeline: the request goes to it in parts, its answer
/// comes back to the client, it is released for reuse, and its own word that a request was never processed makes the
/// exchange replay it on a new connection.
@Suite("The upstream seam: any transport behind UpstreamConnector")
struct UpstreamSeamTests {
    /// A connection that keeps what it is sent; the test answers through its owner.
    final class MemoryConnection: UpstreamConnection {
        var owner: (any UpstreamConnectionOwner)?
        var written: [UpstreamRequestPart] = []
        var releases: [Bool] = []
        var closed = false
        /// How many parts had been written at each flush: what the transport sent, and when.
        var flushedAt: [Int] = []

        func lease(to owner: any UpstreamConnectionOwner) -> Bool {
            guard self.owner == nil, !closed else { return false }
            self.owner = owner
            return true
        }
        var isWritable: Bool { true }
        func send(_ head: UpstreamRequestHead, body: [ByteBuffer], end: Bool) {
            written.append(.head(head))
            for part in body { written.append(.body(part)) }
            if end { written.append(.end) }
        }
        func write(_ body: ByteBuffer) { written.append(.body(body)) }
        func end() { written.append(.end) }
        func flush() { flushedAt.append(written.count) }
        func pauseReads() {}
        func resumeReads() {}
        func release(reuse: Bool, now: NIODeadline) {
            owner = nil
            releases.append(reuse)
        }
        func close() {
            owner = nil
            closed = true
        }

        /// The upstream answers `status` with `body`.
        func answer(_ status: HTTPResponseStatus, body: String) {
            let owner = owner!
            var head = HTTPResponseHead(version: .http1_1, status: status)
            head.headers.add(name: "content-length", value: String(body.utf8.count))
            owner.upstream(self, received: .head(UpstreamResponse(head)))
            owner.upstream(self, received: .body(ByteBuffer(string: body)))
            owner.upstream(self, received: .end(trailers: nil))
            owner.upstreamReadComplete(self)
        }

        /// The transport lost the connection before any answer, and says whether the request was processed.
        func lost(neverProcessed: Bool) {
            let owner = owner!
            self.owner = nil
            closed = true
            owner.upstreamClosed(self, error: nil, neverProcessed: neverProcessed)
        }
    }

    /// Hands out a new ``MemoryConnection`` for each connect, at once; keeps none.
    final class MemoryConnector: UpstreamConnector {
        var made: [MemoryConnection] = []
        func pooled(_ origin: UpstreamOrigin) -> (any UpstreamConnection)? { nil }
        func connect(
            _ origin: UpstreamOrigin, timeout: TimeAmount, on eventLoop: any EventLoop,
            completion: @escaping (Result<any UpstreamConnection, any Error>) -> Void
        ) {
            let connection = MemoryConnection()
            made.append(connection)
            completion(.success(connection))
        }
        func evictIdle(now: NIODeadline) {}
        func closeAll() {}
    }

    /// The generation in force, fixed.
    struct Installed: GenerationSource {
        let context: ProxyContext
        func beginExchange() -> ProxyContext? {
            context.exchangeBegan()
            return context
        }
        var peerUsers: PeerUserPolicy? { nil }
    }

    /// The proxy's client pipeline on an `EmbeddedChannel`, its upstream connections from `connector`, serving a
    /// route that sends no token (so nothing waits on the token cache).
    static func connection(
        _ proxy: ProxyHarness, connector: MemoryConnector, sharing loop: EventLoopState? = nil
    ) throws -> EmbeddedChannel {
        let configuration = try TestConfigurations.make(routes: routes)
        let context = try ProxyContext(
            configuration: configuration, tokens: proxy.proxy.tokens,
            admin: AdminEndpoints(devIssuer: proxy.proxy.devIssuer), policy: SafetyPolicy(),
            timeouts: ProxyTimeouts())
        let channel = EmbeddedChannel(loop: (loop?.eventLoop as? EmbeddedEventLoop) ?? EmbeddedEventLoop())
        let core = ProxyServerCore(
            installed: Installed(context: context), logger: ProxyHarness.silentLogger, metrics: ProxyMetrics(),
            timeouts: ProxyTimeouts())
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(
            ProxyConnectionHandler(
                server: core, loop: loop ?? EventLoopState(eventLoop: channel.embeddedEventLoop, connector: connector)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// What the client connection wrote, once the loop's batch of events has ended (``EventBatch``: the proxy
    /// flushes a response that nothing waits on then).
    static func written(_ channel: EmbeddedChannel) throws -> String {
        channel.embeddedEventLoop.run()
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    /// The client sends `text` in one read, and the loop's batch of events ends (the flushes it asked for are made).
    static func deliver(_ text: String, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
        channel.embeddedEventLoop.run()
    }

    static let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:9/base", "auth": "none" } ]"#
    static let request = "GET /api/items HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    @Test("a request goes to the transport and its answer to the client; the connection is released for reuse")
    func proxied() async throws {
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let connector = MemoryConnector()
            let channel = try Self.connection(proxy, connector: connector)
            try Self.deliver(Self.request, to: channel)
            let connection = try #require(connector.made.first)
            guard case .head(let written) = connection.written.first else {
                Issue.record("no request head went to the transport: \(connection.written)")
                return
            }
            let head = try HTTPRequestHead(written: written.bytes)
            #expect(head.uri == "/base/items")
            #expect(head.headers.first(name: "host") == "127.0.0.1:9")
            #expect(connection.written.last?.isEnd == true)
            connection.answer(.ok, body: "hello")
            let response = try Self.written(channel)
            #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(response)")
            #expect(response.hasSuffix("\r\n\r\nhello"))
            #expect(connection.releases == [true], "both messages complete: kept for the next exchange")
            #expect(connector.made.count == 1)
            _ = try? channel.finish()
        }
    }

    @Test("the transport's word decides a replay: never processed goes again on a new connection, else 502")
    func replayIsTheTransportsWord() async throws {
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let connector = MemoryConnector()
            let channel = try Self.connection(proxy, connector: connector)
            try Self.deliver(Self.request, to: channel)
            try #require(connector.made.count == 1)
            connector.made[0].lost(neverProcessed: true)
            try #require(connector.made.count == 2, "replayed on a new connection")
            #expect(connector.made[1].written.count == 2)
            channel.embeddedEventLoop.run()
            #expect(connector.made[1].flushedAt == [2], "sent outside a client's read: flushed when the batch ends")
            connector.made[1].lost(neverProcessed: false)
            let response = try Self.written(channel)
            #expect(response.hasPrefix("HTTP/1.1 502 "), "\(response)")
            #expect(connector.made.count == 2, "replayed once only")
            _ = try? channel.finish()
        }
    }

    @Test("what one read of the client's brings is flushed to the transport once, when the read completes")
    func oneFlushPerRead() async throws {
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let connector = MemoryConnector()
            let channel = try Self.connection(proxy, connector: connector)
            // A head and its end in one read: one flush, after both (#24 session 18: it was a flush for each).
            try Self.deliver(Self.request, to: channel)
            let first = try #require(connector.made.first)
            #expect(first.written.count == 2)
            #expect(first.flushedAt == [2])
            first.answer(.ok, body: "one")
            _ = try Self.written(channel)
            // A body in two reads: each read's parts are flushed as it completes, the last with the end.
            try Self.deliver(
                "POST /api/items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabcd", to: channel)
            let second = try #require(connector.made.last)
            #expect(connector.made.count == 2)
            #expect(second.written.count == 2, "the head and the body so far: \(second.written)")
            #expect(second.flushedAt == [2], "flushed before the rest of the body is read")
            try Self.deliver("efghij", to: channel)
            #expect(second.written.count == 4)
            #expect(second.written.last?.isEnd == true)
            #expect(second.flushedAt == [2, 4])
            second.answer(.ok, body: "two")
            #expect(try Self.written(channel).hasSuffix("two"))
            _ = try? channel.finish()
        }
    }
}
