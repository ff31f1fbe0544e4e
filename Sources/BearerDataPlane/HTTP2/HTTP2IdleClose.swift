import BearerTelemetry
import Metrics
import NIOCore
import NIOHTTP2

/// Closes an HTTP/2 client connection that has no stream open, as an HTTP/1.1 connection idle between requests is
/// closed: when it has had none for the idle limit (``ProxyTimeouts/clientIdle``), and at once when room is wanted at
/// the connection cap (``ConnectionLimiter/RoomWanted``).
///
/// At the idle limit it asks NIOHTTP2's connection-management handler, after it, for its graceful close (RFC 9113
/// §6.8: GOAWAY naming every stream, a PING, then GOAWAY naming the last stream taken), so that a stream the client
/// opens as the limit passes is still served. The limit is kept lazily: opening and closing a stream only notes the
/// time, and the one timer, when it fires, looks at when the connection last had a stream and waits again for the
/// rest. The management handler's own idle timer was cancelled and started again as each stream opened and closed,
/// about 2 % of an HTTP/2 request's CPU when each connection carries one stream at a time (docs/benchmarks.md).
///
/// For room: a connection that has served a stream and has none open says GOAWAY (`NO_ERROR`, naming the last stream
/// it took) and closes, counted in `bearer_proxy_idle_connections_closed_total`, so that clients holding idle HTTP/2
/// connections cannot keep a health probe or a new client in the backlog until their idle limit. A connection with a
/// stream open is never closed for room: its exchanges run on, as a busy HTTP/1.1 connection's do. Nor is one that has
/// not opened its first stream yet, whose request may be on its way.
///
/// It sits after `NIOHTTP2Handler` and writes its GOAWAY through it, and counts the streams from the events NIOHTTP2
/// sends up the pipeline as each opens and closes. NIOHTTP2 also says "closed" of a stream it refused as its HEADERS
/// came (a field value with CR or LF, RFC 9113 §8.2.1), which it never said was open: that event goes no further, so
/// that the connection-management handler after this one, which asserts that every stream it hears close was open,
/// hears only streams that opened.
final class HTTP2IdleClose: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let closedForRoom: Metrics.Counter
    private let idleLimit: TimeAmount
    private var context: ChannelHandlerContext?
    /// The streams open now: at most the connection's concurrency limit.
    private var open: Set<HTTP2StreamID> = []
    private var openStreams: Int { open.count }
    /// The highest stream the client opened: a GOAWAY names it, so that the client knows no later one was taken.
    private var lastStreamID = HTTP2StreamID.rootStream
    /// Since when the connection has had no stream open (meaningful while ``openStreams`` is 0).
    private var idleSince = NIODeadline.uptimeNanoseconds(0)
    private var timer: Scheduled<Void>?
    private var closing = false

    init(metrics: ProxyMetrics, idleLimit: TimeAmount) {
        self.closedForRoom = metrics.idleClosedAtLimit
        self.idleLimit = idleLimit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added once the connection's preface has come: it is idle from now, with no stream yet.
        idleSince = context.eventLoop.now
        arm(at: idleSince + idleLimit)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    private func opened(_ id: HTTP2StreamID) {
        open.insert(id)
        lastStreamID = max(lastStreamID, id)
    }

    /// Whether `id` was open.
    private func closed(_ id: HTTP2StreamID) -> Bool {
        guard open.remove(id) != nil else { return false }
        if openStreams == 0, let context { idleSince = context.eventLoop.now }
        return true
    }

    private func arm(at deadline: NIODeadline) {
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            limitReached()
        }
    }

    /// The timer fired: the connection closes if it has had no stream for the whole limit, else the timer waits
    /// for the rest of it (from the last stream's close, or a whole limit while a stream is open).
    private func limitReached() {
        guard let context, !closing else { return }
        let now = context.eventLoop.now
        if openStreams > 0 { return arm(at: now + idleLimit) }
        let deadline = idleSince + idleLimit
        if now < deadline { return arm(at: deadline) }
        closing = true
        context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let created = event as? NIOHTTP2StreamCreatedEvent {
            opened(created.streamID)
            return context.fireUserInboundEventTriggered(event)
        }
        if let closedStream = event as? StreamClosedEvent {
            guard closed(closedStream.streamID) else { return }
            return context.fireUserInboundEventTriggered(event)
        }
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
