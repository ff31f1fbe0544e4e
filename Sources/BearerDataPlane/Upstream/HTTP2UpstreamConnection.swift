import NIOCore
import NIOHTTP2

/// One HTTP/2 connection to an upstream origin (RFC 9113), the handler after NIOHTTP2's on its channel: it opens a
/// stream for each exchange (``HTTP2UpstreamStream``), up to the number the upstream allows at once, and keeps the
/// facts that decide whether it may take another — the upstream's SETTINGS_MAX_CONCURRENT_STREAMS, a GOAWAY, an
/// error, the close. NIOHTTP2 hands it the frames of stream 0 (SETTINGS, GOAWAY, PING) after acting on them itself.
///
/// Health rules: after a GOAWAY it opens no stream (RFC 9113 §6.8) and closes once its last stream has; a connection
/// that errs is closed, never reused; one with no stream for the connector's idle limit is closed by the sweep.
final class HTTP2UpstreamConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

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
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    /// Told when the connection can take no more streams ever (its connector, on the same loop).
    private let gone: (HTTP2UpstreamConnection) -> Void
    private var state = State.open
    private var context: ChannelHandlerContext?
    private(set) var openStreams = 0
    private var maximumStreams = HTTP2UpstreamConnection.assumedConcurrentStreams
    /// Since when it has had no stream.
    private var idleSince = NIODeadline.now()

    init(
        origin: UpstreamOrigin, multiplexer: NIOHTTP2Handler.StreamMultiplexer,
        gone: @escaping (HTTP2UpstreamConnection) -> Void
    ) {
        self.origin = origin
        self.multiplexer = multiplexer
        self.gone = gone
    }

    /// Whether it can take a stream now.
    var hasRoom: Bool {
        guard case .open = state, context != nil else { return false }
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

    /// One of its streams has closed at `now`.
    func streamClosed(now: NIODeadline) {
        openStreams -= 1
        guard openStreams == 0 else { return }
        idleSince = now
        if case .draining = state { close() }
    }

    /// Whether the upstream's GOAWAY said that stream `id` was never processed (RFC 9113 §6.8: its identifier is above
    /// the last one the upstream names).
    func goAwayDropped(_ id: HTTP2StreamID) -> Bool {
        guard case .draining(let last?) = state else { return false }
        return id > last
    }

    /// The sweep: closes it if it has had no stream for `limit`; whether it did.
    func closeIfIdle(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard openStreams == 0, now - idleSince >= limit else { return false }
        close()
        return true
    }

    func close() {
        leave()
        context?.close(promise: nil)
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
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .goAway(let lastStreamID, _, _):
            // NIOHTTP2 hands the frame on before it closes the streams above `lastStreamID`, so they can tell that
            // their request was never processed (``goAwayDropped(_:)``).
            drain(lastStreamID: lastStreamID)
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                maximumStreams = setting.value
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 reports a connection error (after sending GOAWAY) and a stream's error (after resetting it) alike
        // here; either way the connection is never used for another exchange, and the streams it carries end as
        // they will — the stream that erred has been told on its own channel.
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
        leave()
        context.fireChannelInactive()
    }
}
