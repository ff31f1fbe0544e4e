import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import BearerDataPlane

/// A hostile client against the response body's backpressure (SPEC §8: bodies stream, never buffered whole): it asks
/// for a body of a GiB from an upstream that sends as fast as its socket allows, and reads none of it. The proxy must
/// stop reading the upstream once the client's connection cannot take more, so what the upstream gets rid of is
/// bounded by the sockets' buffers on the way, not by the body's size. A proxy that kept reading would hold the
/// whole body in memory, for as long as its client cares to keep the connection open.
///
/// The client's writability is the proxy's own record of NIO's writability events (#24 session 21: asking the
/// channel cost a retain and a release per body part); a record that missed the event that turns it off would be
/// exactly that proxy.
@Suite("Security: a download to a client that reads nothing stops at the sockets' buffers")
struct DownloadBackpressureTests {
    /// An upstream that answers any request with `Content-Length: total` and writes the body while its socket takes
    /// it, counting what it wrote.
    final class FirehoseHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let total: Int
        /// Read by the test on its own thread while the handler writes.
        let written = Atomic<Int>(0)
        private let started = Atomic<Bool>(false)

        init(total: Int) {
            self.total = total
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !started.exchange(true, ordering: .relaxed) else { return }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(total)\r\n\r\n"
            context.write(wrapOutboundOut(ByteBuffer(string: head)), promise: nil)
            pump(context: context)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { pump(context: context) }
        }

        private func pump(context: ChannelHandlerContext) {
            let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 * 1024)
            while context.channel.isWritable, written.load(ordering: .relaxed) < total {
                let part = min(chunk.readableBytes, total - written.load(ordering: .relaxed))
                context.write(wrapOutboundOut(chunk.getSlice(at: 0, length: part)!), promise: nil)
                written.add(part, ordering: .relaxed)
            }
            context.flush()
        }
    }

    /// Runs `body` with the port of a firehose upstream and the count of body bytes it has written.
    static func withFirehose<T>(total: Int, _ body: (Int, @Sendable () -> Int) async throws -> T) async throws -> T {
        let handlers = Mutex<[FirehoseHandler]>([])
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = FirehoseHandler(total: total)
                    handlers.withLock { $0.append(handler) }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let written: @Sendable () -> Int = {
            handlers.withLock { $0.reduce(0) { $0 + $1.written.load(ordering: .relaxed) } }
        }
        do {
            let result = try await body(try #require(server.localAddress?.port), written)
            try await server.close()
            return result
        } catch {
            try? await server.close()
            throw error
        }
    }

    /// What the upstream has written once it stops: it writes until the buffers on the way are full, so progress is
    /// watched until a second goes by without any (or the whole body went, which is a test's failure).
    static func bytesWhenStalled(_ written: @Sendable () -> Int, total: Int) async throws -> Int {
        var last = -1
        var quiet = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while quiet < 10, written() < total, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            let now = written()
            quiet = now == last && now > 0 ? quiet + 1 : 0
            last = now
        }
        return written()
    }

    @Test("1 GiB to a client that never reads: the upstream is held back before 64 MiB")
    func deafClient() async throws {
        let total = 1 << 30
        let bound = 64 << 20
        try await Self.withFirehose(total: total) { port, written in
            let route = #"{ "prefix": "/api", "upstream": "http://127.0.0.1:\#(port)", "scopes": ["api://api/Read"] }"#
            try await ProxyHarness.with(routes: "[\(route)]") { proxy in
                // A client that sends its request and never reads: NIO issues no read without autoRead.
                let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelOption(.autoRead, value: false)
                    .connect(host: "127.0.0.1", port: proxy.port).get()
                let request = "GET /api/big HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n"
                try await client.writeAndFlush(ByteBuffer(string: request)).get()
                let sent = try await Self.bytesWhenStalled(written, total: total)
                try await client.close()
                #expect(sent > 0, "the upstream wrote nothing")
                #expect(sent < bound, "the proxy took \(sent) bytes of a body its client never read")
            }
        }
    }
}
