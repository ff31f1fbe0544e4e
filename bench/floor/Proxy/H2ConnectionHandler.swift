import NIOCore
import NIOHPACK
import NIOHTTP2

/// The floor's streams in ``H2Floor/Mode/connection``: one handler after NIOHTTP2's, for every stream of the
/// connection; each response is written as frames that name their stream, and nothing is allocated a stream.
final class H2ConnectionHandler: ChannelInboundHandler, H2ResponseReceiver {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

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
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard headers.endStream,
                let head = H2Request.head(headers.headers, rewrite: pool.rewrite, allocator: context.channel.allocator)
            else { return reset(frame.streamID) }
            pool.send(head, stream: frame.streamID, to: self)
        case .data:
            reset(frame.streamID)
        default:
            break
        }
    }

    private func reset(_ stream: HTTP2StreamID) {
        context?.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.refusedStream))), promise: nil)
    }

    func responseHead(_ headers: HPACKHeaders, endStream: Bool, stream: HTTP2StreamID) {
        context?.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers, endStream: endStream)))),
            promise: nil)
    }

    func responseBody(_ body: ByteBuffer, endStream: Bool, stream: HTTP2StreamID) {
        context?.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(body), endStream: endStream)))),
            promise: nil)
    }

    func responseFailed(stream: HTTP2StreamID) {
        reset(stream)
    }

    func upstreamReadComplete() {
        context?.flush()
    }
}
