import NIOCore

@testable import BearerCodec
@testable import BearerDataPlane

/// A ``MessageFramer`` as a handler, for the tests that write parts into an `EmbeddedChannel` and read the bytes: the
/// product's connection handlers own their framers.
final class MessageEncoder<Part: MessagePartConvertible>: ChannelOutboundHandler {
    typealias OutboundIn = Part
    typealias OutboundOut = ByteBuffer

    private var framer = MessageFramer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        framer.write(unwrapOutboundIn(data).messagePart, from: context, promise: promise)
    }
}
