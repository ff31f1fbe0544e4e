import NIOCore
import NIOPosix
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

/// Bytes that arrive in the same read as a WebSocket handshake or its `101` (found while replaying the real clients'
/// corpus, issue #24 condition 4). `ProxyConnectionHandler.becomeTunnel` means them to reach the tunnel ("the
/// decoders last, so the bytes they hold … reach the tunnel"), and they do reach it; but NIO's decoders hand them on
/// with `fireChannelRead` and no `channelReadComplete` (`HTTPDecoder.decodeLast`), and `TunnelHandler` flushes only
/// on `channelReadComplete`, so they wait, written and unflushed, until the next read on that side. With real
/// software (`Tests/differential/clients/websocket-greeting.py`), a server's greeting sent on connect reaches a
/// client through the proxy on about two connections in three.
///
/// Fixed in session 13: `becomeTunnel` flushes both channels once the decoders have left.
@Suite("WebSocket: bytes behind the handshake or the 101 go through the tunnel at once")
struct WebSocketEarlyBytesTests {
    /// The corpus's WebSocket client: its handshake, its key, and the frames it sent after it.
    static func handshake() throws -> (handshake: [UInt8], frames: [UInt8], switching: String) {
        let capture = try #require(RealClientCapture.all.first { $0.name == "python-websockets-1" })
        let message = try #require(NIOStreamReference.requests(capture.input).messages.first?.comparable)
        let key = try #require(message.fields.first { $0.name == "sec-websocket-key" }?.value)
        let switching =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketAccept.value(for: key))\r\n\r\n"
        return (
            Array(capture.bytes.dropLast(capture.bytesAfterFirstHead)),
            Array(capture.bytes.suffix(capture.bytesAfterFirstHead)), switching
        )
    }

    @Test("a client's frames in the same write as its handshake reach the upstream")
    func clientFramesBehindTheHandshake() async throws {
        let (handshake, frames, switching) = try Self.handshake()
        try await RawUpstream.withProxy(answer: { _ in .raw(switching) }) { proxy, upstream in
            // A client that does not wait for the 101 (RFC 6455 §4.1 says it should; the proxy means to carry them).
            async let relayed = RawByteCapture.exchange(port: proxy.port, bytes: handshake + frames)
            try await upstream.state.wait(for: "the handshake and its frames", timeout: TestLimits.wait) {
                let received = $0.connections[1]?.bytes(.plain) ?? []
                return RealClientCapture.headLength(received).map { received.count >= $0 + frames.count } ?? false
            }
            let received = upstream.received(on: 1, .plain)
            #expect(received.suffix(frames.count).elementsEqual(frames))
            await upstream.closeOpenConnections()
            _ = try await relayed
        }
    }

    @Test("an upstream's first frame in the same write as its 101 reaches the client")
    func upstreamFrameBehindThe101() async throws {
        let (handshake, _, switching) = try Self.handshake()
        // An unmasked text frame, "hello" (RFC 6455 §5.2): a server's greeting, written with its 101.
        let greeting: [UInt8] = [0x81, 0x05] + Array("hello".utf8)
        try await RawUpstream.withProxy(answer: { _ in .raw(switching + Latin1.string(greeting)) }) { proxy, upstream in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let arrived = loop.makePromise(of: [UInt8].self)
            let channel = try await ClientBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            BytesAwaiter(suffix: greeting, promise: arrived))
                    }
                }
                .connect(host: "127.0.0.1", port: proxy.port).get()
            channel.writeAndFlush(ByteBuffer(bytes: handshake), promise: nil)
            let received = try await withTimeout(waitingFor: "the upstream's greeting behind its 101") {
                try await arrived.futureResult.get()
            }
            #expect(received.starts(with: Array("HTTP/1.1 101 ".utf8)))
            try await channel.close()
        }
    }
}

/// Keeps what a connection receives and completes its promise once the bytes end with `suffix`.
private final class BytesAwaiter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let suffix: [UInt8]
    private let promise: EventLoopPromise<[UInt8]>
    private var received: [UInt8] = []
    private var done = false

    init(suffix: [UInt8], promise: EventLoopPromise<[UInt8]>) {
        self.suffix = suffix
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytesView
        if !done, received.count >= suffix.count, received.suffix(suffix.count).elementsEqual(suffix) {
            done = true
            promise.succeed(received)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(TestSupportError.shutDown)
        }
        context.fireChannelInactive()
    }
}
