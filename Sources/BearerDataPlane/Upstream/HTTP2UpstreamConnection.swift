import BearerTelemetry
import NIOCore
import NIOHTTP2

/// One HTTP/2 connection to an upstream origin (RFC 9113), the handler after NIOHTTP2's on its channel: it opens a
/// stream for each exchange (``HTTP2UpstreamStream``), up to the number the upstream allows at once, and keeps the
/// facts that decide whether it may take another — the upstream's SETTINGS_MAX_CONCURRENT_STREAMS, a GOAWAY, an
/// error, the close. NIOHTTP2 hands it the frames of stream 0 (SETTINGS, GOAWAY, PING) after acting on them itself.
///
/// Health rules: after a GOAWAY it opens no stream (RFC 9113 §6.8) and closes once its last stream has; a connection
/// that errs is closed, never reused. One with no stream is probed with PING (RFC 9113 §6.7) every
/// ``Idle/pingInterval``, takes no stream until the ACK comes, and is closed at once when it does not come within
/// ``Idle/pingTimeout`` (the upstream is gone: nothing more is written to it); one with no stream for ``Idle/limit``
/// says GOAWAY and closes.
///
/// The idle times are kept lazily, as the client side's (``HTTP2IdleClose``): opening and closing a stream only
/// counts it and notes the time, and the one timer, when it fires, looks at the connection and waits again for the
/// rest. A request thus costs no timer work: cancelling and scheduling one as each stream opens and closes would cost
/// three allocations a request when the connection carries one stream at a time.
final class HTTP2UpstreamConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// When a connection with no stream is probed and closed (``HTTP2Connector`` chooses the values).
    struct Idle {
        /// No stream for this long: GOAWAY, then close.
        var limit: TimeAmount
        /// No stream for this long: a PING, and again this long after each ACK.
        var pingInterval: TimeAmount
        /// A PING without ACK for this long: the upstream is gone.
        var pingTimeout: TimeAmount
    }

    private enum State {
        case open
        /// It opens no more streams, and closes when its last one has: the upstream sent GOAWAY naming
        /// `lastStreamID` (the streams above it were not processed), or the connection erred (nil).
        case draining(lastStreamID: HTTP2StreamID?)
        case closed
    }

    /// Streams it opens before the upstream's SETTINGS says how many it allows: NIOHTTP2's own assumption, and what
    /// most servers allow (RFC 9113 §6.5.2 leaves the initial value unlimited; nginx, Go and Envoy send 100 or more).
    static let assumedConcurrentStreams = 100

    let origin: UpstreamOrigin
    private let multiplexer: HTTP2StreamMultiplexer
    /// Told when the connection can take no more streams ever (its connector, on the same loop).
    private let gone: (HTTP2UpstreamConnection) -> Void
    private var state = State.open
    private var context: ChannelHandlerContext?
    private(set) var openStreams = 0
    private var maximumStreams = HTTP2UpstreamConnection.assumedConcurrentStreams
    /// Since when it has had no stream (meaningful while ``openStreams`` is 0), on its loop's clock.
    private var idleSince = NIODeadline.uptimeNanoseconds(0)
    private let idle: Idle
    /// The one timer of the idle probe, armed from the connection's start to its close: the next look at whether it
    /// is idle, or the end of the wait for a PING's ACK. Readable so that tests can tell it is the same one.
    private(set) var idleTimer: Scheduled<Void>?
    /// The PING that has had no ACK yet (RFC 9113 §6.7: the ACK carries the same 8 bytes).
    private var pingOutstanding: HTTP2PingData?
    private var pingsSent: UInt64 = 0
    /// Where its end is counted, once, by the first reason it met (``ended(_:)``).
    private let metrics: ProxyMetrics?
    private var endCounted = false

    init(
        origin: UpstreamOrigin, multiplexer: HTTP2StreamMultiplexer, idle: Idle,
        metrics: ProxyMetrics? = nil, gone: @escaping (HTTP2UpstreamConnection) -> Void
    ) {
        self.origin = origin
        self.multiplexer = multiplexer
        self.idle = idle
        self.metrics = metrics
        self.gone = gone
    }

    /// Whether it can take a stream now. Not while a PING waits for its ACK: an upstream that does not answer it may
    /// be gone (RFC 9113 §6.7), and an exchange put on it would wait out its response-head timeout for nothing; the
    /// exchange opens another connection instead.
    var hasRoom: Bool {
        guard case .open = state, context != nil, pingOutstanding == nil else { return false }
        return openStreams < maximumStreams
    }

    /// A new stream for one exchange, or nil when it has no room.
    func openStream() -> HTTP2UpstreamStream? {
        guard hasRoom else { return nil }
        guard let context else { return nil }
        let stream = HTTP2UpstreamStream(connection: self, eventLoop: context.eventLoop)
        openStreams += 1
        // Bound to the loop: NIOHTTP2 runs the initializer on it, at once (the connection's loop is this one).
        let handler = NIOLoopBound(stream, eventLoop: context.eventLoop)
        multiplexer.createStreamChannel(promise: nil) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(handler.value)
            }
        }
        return stream
    }

    /// One of its streams has closed. The idle timer is left as it is: when it fires it measures from now, on the same
    /// clock, its loop's.
    func streamClosed() {
        openStreams -= 1
        guard openStreams == 0 else { return }
        idleSince = context?.eventLoop.now ?? .now()
        if case .draining = state { return close() }
    }

    /// A stream ended with its request body held back by the upstream's flow-control window (RFC 9113 §6.9): the
    /// upstream grants no room, and a new stream here would stall the same way, so the connection takes none.
    func flowControlStalled() {
        ended("flow_control_stalled")
        drain(lastStreamID: nil)
    }

    /// Whether the upstream's GOAWAY said that stream `id` was never processed (RFC 9113 §6.8: its identifier is above
    /// the last one the upstream names).
    func goAwayDropped(_ id: HTTP2StreamID) -> Bool {
        guard case .draining(let last?) = state else { return false }
        return id > last
    }

    /// The sweep: retires it if it has had no stream for `limit`; whether it did.
    func closeIfIdle(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard openStreams == 0, now - idleSince >= limit else { return false }
        retire()
        return true
    }

    func close() {
        leave()
        cancelIdleTimer()
        context?.close(promise: nil)
    }

    /// Ends an idle connection politely: GOAWAY with NO_ERROR, naming stream 0 as the last of the upstream's
    /// (RFC 9113 §6.8: the proxy accepts no stream from it), then the close once that is written.
    private func retire() {
        ended("idle")
        guard let context else { return close() }
        leave()
        cancelIdleTimer()
        let goAway = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(goAway)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    // MARK: Idle probe

    private func armIdleTimer(at deadline: NIODeadline) {
        cancelIdleTimer()
        guard let context else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            idleTimerFired()
        }
    }

    private func cancelIdleTimer() {
        idleTimer?.cancel()
        idleTimer = nil
    }

    /// The connection's next step: the PING had no ACK in time (the upstream is gone: closed, with no stream since
    /// the PING went out); a stream is open (looked at again a whole interval on); it has had no stream for less
    /// than the interval, a stream having closed since the timer was armed (it waits for the rest); the idle limit
    /// is reached (GOAWAY); or it is probed.
    private func idleTimerFired() {
        guard case .open = state, let context else { return }
        if pingOutstanding != nil {
            pingOutstanding = nil
            ended("ping_timeout")
            return drain(lastStreamID: nil)
        }
        let now = context.eventLoop.now
        if openStreams > 0 { return armIdleTimer(at: now + idle.pingInterval) }
        if now - idleSince < idle.pingInterval { return armIdleTimer(at: idleSince + idle.pingInterval) }
        if now - idleSince >= idle.limit { return retire() }
        pingsSent += 1
        let ping = HTTP2PingData(withInteger: pingsSent)
        pingOutstanding = ping
        let frame = HTTP2Frame(streamID: .rootStream, payload: .ping(ping, ack: false))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        armIdleTimer(at: now + idle.pingTimeout)
    }

    /// The upstream answered the PING: it is alive. The next probe, or the idle limit, follows.
    private func pingAcknowledged(_ data: HTTP2PingData) {
        guard data == pingOutstanding else { return }
        pingOutstanding = nil
        guard case .open = state, let context else { return cancelIdleTimer() }
        let now = context.eventLoop.now
        let untilLimit = idle.limit - (now - idleSince)
        armIdleTimer(at: now + max(.zero, min(idle.pingInterval, untilLimit)))
    }

    /// Counts the connection's end by `reason`, the first time only: what ended it, not what followed.
    private func ended(_ reason: String) {
        guard !endCounted else { return }
        endCounted = true
        metrics?.upstreamHTTP2ConnectionsEnded(reason: reason).increment()
    }

    /// It is closing: its connector forgets it.
    private func leave() {
        if case .closed = state { return }
        state = .closed
        gone(self)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added as the connection opens: idle from now, with no stream yet.
        idleSince = context.eventLoop.now
        armIdleTimer(at: idleSince + idle.pingInterval)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelIdleTimer()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .goAway(let lastStreamID, _, _):
            // NIOHTTP2 hands the frame on before it closes the streams above `lastStreamID`, so they can tell that
            // their request was never processed (``goAwayDropped(_:)``).
            ended("goaway")
            drain(lastStreamID: lastStreamID)
        case .ping(let data, ack: true):
            pingAcknowledged(data)
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                maximumStreams = setting.value
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 reports a stream's error (after resetting it, RFC 9113 §5.4.2) and a connection error (after
        // sending GOAWAY, §5.4.1) alike here. A stream error: the stream that erred has been told on its own channel,
        // the others end as they will, and the connection takes no new one. A connection error — a flood, a header
        // block over the limit, a window past 2^31-1, a frame for a stream the proxy never opened — ends the
        // connection now: NIOHTTP2 does not close it, and its streams would wait for frames that never come.
        guard HTTP2ConnectionErrors.isStreamError(error) else {
            ended("connection_error")
            return close()
        }
        ended("stream_error")
        drain(lastStreamID: nil)
    }

    /// It takes no more streams, and closes once it has none (RFC 9113 §6.8).
    private func drain(lastStreamID: HTTP2StreamID?) {
        switch state {
        case .closed: return
        case .draining(let known): state = .draining(lastStreamID: lastStreamID ?? known)
        case .open: state = .draining(lastStreamID: lastStreamID)
        }
        gone(self)
        if openStreams == 0 { close() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended("closed")
        leave()
        cancelIdleTimer()
        context.fireChannelInactive()
    }
}
