import NIOCore
import NIOHTTP1

/// First handler of a `TestClient.raw` channel: writes the test's raw bytes straight to the socket, and swallows
/// the `HTTPClientRequestPart.head`s that `RawResponseCollector` writes only so that NIO's `HTTPResponseDecoder`
/// (which learns request methods by observing outbound heads) knows which responses answer HEAD requests.
final class RawBytesWriter: ChannelOutboundHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Only ever the decoder-priming heads: never on the wire.
        promise?.succeed()
    }

    /// Writes and flushes `bytes` as they are, from this handler's position (below the decoder).
    func send(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(TestSupportError.connectionClosed(head: nil, bodyBytes: 0))
            return
        }
        context.writeAndFlush(self.wrapOutboundOut(bytes), promise: promise)
    }
}
