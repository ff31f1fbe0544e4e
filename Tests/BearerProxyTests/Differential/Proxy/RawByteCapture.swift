import NIOCore
import NIOPosix

/// A client that writes raw bytes and keeps every byte it receives until the server closes: what the proxy wrote to
/// the client, exactly, for the references to frame (condition 3, the response side).
final class RawByteCapture: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var received: [UInt8] = []
    private let promise: EventLoopPromise<[UInt8]>
    /// Bytes written once the first response head has arrived.
    private var afterResponseHead: [UInt8]

    init(promise: EventLoopPromise<[UInt8]>, afterResponseHead: [UInt8] = []) {
        self.promise = promise
        self.afterResponseHead = afterResponseHead
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytesView
        if !afterResponseHead.isEmpty, received.contains(text: "\r\n\r\n") {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: afterResponseHead)), promise: nil)
            afterResponseHead = []
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.succeed(received)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset after the answer: what arrived before it is the answer.
        context.close(promise: nil)
    }

    /// Writes `bytes` to 127.0.0.1:`port` and returns everything received until the server closes the connection.
    /// `afterResponseHead` is written once the first response head has arrived: a WebSocket client's frames, which
    /// wait for the `101` (RFC 6455 §4.1).
    static func exchange(port: Int, bytes: [UInt8], afterResponseHead: [UInt8] = []) async throws -> [UInt8] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: [UInt8].self)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RawByteCapture(promise: promise, afterResponseHead: afterResponseHead))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}
