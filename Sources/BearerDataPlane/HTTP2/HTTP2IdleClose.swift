import BearerTelemetry
import Metrics
import NIOCore
import NIOHTTP2

/// Makes room at the connection cap (``ConnectionLimiter/RoomWanted``) as an HTTP/1.1 connection idle between
/// requests does: an HTTP/2 connection that has served a stream and has none open says GOAWAY (RFC 9113 §6.8,
/// `NO_ERROR`, naming the last stream it took) and closes, counted in `bearer_proxy_idle_connections_closed_total`,
/// so that clients holding idle HTTP/2 connections cannot keep a health probe or a new client in the backlog until
/// their idle limit. A connection with a stream open is never closed for room: its exchanges run on, as a busy
/// HTTP/1.1 connection's do. Nor is one that has not opened its first stream yet, whose request may be on its way.
///
/// It sits after `NIOHTTP2Handler` and writes its GOAWAY through it. NIOHTTP2 tells the streams' opening and closing
/// to one stream delegate, which the connection-management handler needs too: ``Streams`` hears them first.
final class HTTP2IdleClose: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// NIOHTTP2's stream delegate for this connection: counts the streams, then passes each event on to `next`.
    struct Streams: NIOHTTP2StreamDelegate {
        let handler: NIOLoopBound<HTTP2IdleClose>
        let next: any NIOHTTP2StreamDelegate

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            handler.value.openStreams += 1
            handler.value.lastStreamID = max(handler.value.lastStreamID, id)
            next.streamCreated(id, channel: channel)
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            handler.value.openStreams = max(0, handler.value.openStreams - 1)
            next.streamClosed(id, channel: channel)
        }
    }

    private let closedForRoom: Metrics.Counter
    private var openStreams = 0
    /// The highest stream the client opened: a GOAWAY names it, so that the client knows no later one was taken.
    private var lastStreamID = HTTP2StreamID.rootStream
    private var closing = false

    init(metrics: ProxyMetrics) {
        self.closedForRoom = metrics.idleClosedAtLimit
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ConnectionLimiter.RoomWanted, openStreams == 0, lastStreamID != .rootStream, !closing else {
            return context.fireUserInboundEventTriggered(event)
        }
        closing = true
        closedForRoom.increment()
        let goAway = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(goAway)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
