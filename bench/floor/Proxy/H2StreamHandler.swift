import NIOCore
import NIOHPACK
import NIOHTTP2

/// The floor's stream in ``H2Floor/Mode/channels``: the last handler of one stream's child channel.
final class H2StreamHandler: ChannelInboundHandler, H2ResponseReceiver {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let pool: H2UpstreamPool
    private var context: ChannelHandlerContext?

    init(pool: H2UpstreamPool) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            guard headers.endStream,
                let head = H2Request.head(headers.headers, rewrite: pool.rewrite, allocator: context.channel.allocator)
            else { return reset() }
            // The child channel knows its stream; the pool's receiver protocol carries one for the connection shape.
            pool.send(head, stream: HTTP2StreamID(0), to: self)
        case .data:
            reset()
        default:
            break
        }
    }

    private func reset() {
        context?.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
    }

    func responseHead(_ headers: HPACKHeaders, endStream: Bool, stream: HTTP2StreamID) {
        context?.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: endStream))), promise: nil)
    }

    func responseBody(_ body: ByteBuffer, endStream: Bool, stream: HTTP2StreamID) {
        context?.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: endStream))), promise: nil)
    }

    func responseFailed(stream: HTTP2StreamID) {
        reset()
    }

    func upstreamReadComplete() {
        context?.flush()
    }
}
