import NIOCore
import NIOHPACK
import NIOHTTP2

/// Between NIOHTTP2's handler and its stream multiplexer on a connection to an HTTP/2 upstream: keeps from a stream's
/// channel the frames it would hold without bound.
///
/// A stream's channel holds every frame that comes for it while its exchange withholds `read()` (its client is slow),
/// and only DATA is bounded there, by the stream's window. A hostile upstream could fill the rest:
/// - WINDOW_UPDATE frames, which no NIOHTTP2 limit counts: each one-byte increment a frame held, 2^31 of them before
///   the window overflows. NIOHTTP2 has applied them when they come here, and a stream's channel learns its window
///   from NIOHTTP2's events, not from the frames: they go no further. PRIORITY frames neither (RFC 9113 §5.3.2:
///   deprecated, and the proxy does not prioritise).
/// - Interim responses (1xx, RFC 9110 §15.2), which flow control does not count: a stream that has had more than
///   ``maximumInterimResponses`` is reset with `ENHANCE_YOUR_CALM` (RFC 9113 §7), and its exchange answered `502`.
///   An HTTP/1.1 upstream's are bounded by the socket: the proxy stops reading it.
final class HTTP2UpstreamFrameFilter: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Interim responses a stream may have before its final one: `100 Continue`, `102 Processing` while a long request
    /// runs, a few `103 Early Hints`.
    static let maximumInterimResponses = 16

    /// The interim responses of each stream that has had one and not yet its final response.
    private(set) var interimResponses: [HTTP2StreamID: Int] = [:]

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.streamID != .rootStream else { return context.fireChannelRead(data) }
        switch frame.payload {
        case .windowUpdate, .priority:
            return
        case .headers(let headers):
            guard let status = headers.headers.first(name: ":status"), status.utf8.first == UInt8(ascii: "1") else {
                interimResponses.removeValue(forKey: frame.streamID)
                break
            }
            let count = interimResponses[frame.streamID, default: 0] + 1
            guard count <= Self.maximumInterimResponses else {
                interimResponses.removeValue(forKey: frame.streamID)
                let reset = HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.enhanceYourCalm))
                context.writeAndFlush(wrapOutboundOut(reset), promise: nil)
                return
            }
            interimResponses[frame.streamID] = count
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent { interimResponses.removeValue(forKey: closed.streamID) }
        context.fireUserInboundEventTriggered(event)
    }
}
