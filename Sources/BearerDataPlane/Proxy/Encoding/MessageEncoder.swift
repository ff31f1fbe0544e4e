import NIOCore

/// A ``MessageFramer`` as a handler, for a pipeline whose parts come from a handler after it: an upstream
/// connection's requests (``UpstreamRequestPart``). The client's connection frames its responses itself.
package final class MessageEncoder<Part: MessagePartConvertible>: ChannelOutboundHandler, RemovableChannelHandler {
    package typealias OutboundIn = Part
    package typealias OutboundOut = ByteBuffer

    private var framer = MessageFramer()

    package init() {}

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        framer.write(unwrapOutboundIn(data).messagePart, from: context, promise: promise)
    }
}
