import BearerCodec
import NIOCore
import NIOHPACK
import NIOHTTP2

/// HTTP/2's ``UpstreamConnection``: one stream of an ``HTTP2UpstreamConnection``, the one handler of its stream channel.
/// A stream carries one request and its response (RFC 9113 §8.1), so it is leased once and never pooled; the TCP
/// connection under it is what is shared.
///
/// The request goes as a HEADERS frame (``HTTP2UpstreamFields``) and DATA frames; the response comes back as the parts
/// the exchange reads from an HTTP/1.1 upstream: a head for each header section before the body (1xx, then the final
/// one), the DATA as body, and the end — with the trailing header section as trailers when there is one.
///
/// Backpressure is per stream: while the exchange pauses reads, the stream's `read()` is withheld, NIOHTTP2 keeps the
/// frames that arrive and sends no WINDOW_UPDATE for them, so the upstream stops at the stream's window (RFC 9113
/// §5.2) while the connection's other streams go on. Writability is the stream channel's: it follows the window the
/// upstream grants this stream.
final class HTTP2UpstreamStream: ChannelDuplexHandler, UpstreamConnection {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum State {
        /// Opened, not leased yet.
        case fresh
        /// An exchange uses it.
        case leased
        /// The exchange let go of it.
        case done
        /// Its channel closed, and the connection counted it.
        case closed
    }

    /// The connection it is a stream of (strong: it lives as long as its streams, and forgets them as they close).
    private let connection: HTTP2UpstreamConnection
    private var state = State.fresh
    private(set) var owner: (any UpstreamConnectionOwner)?
    private var context: ChannelHandlerContext?
    private var readsPaused = false
    private var reads = ReadGate()
    private(set) var isWritable = true
    /// The request was a `HEAD`: its response has no body (RFC 9110 §9.3.2).
    private var requestWasHead = false
    /// The final response head has arrived: another header section is the trailers.
    private var finalHeadReceived = false
    /// Any response frame arrived: the upstream may have acted on the request.
    private var answered = false
    /// The response's end was handed over.
    private var responseEnded = false
    /// The request's end was written.
    private var requestEnded = false
    /// Why the stream ended, if it did not end cleanly: told to the exchange when the channel closes.
    private var failure: (any Error)?
    /// Frames written before the stream channel took this handler: NIOHTTP2 may run its initializer after the
    /// exchange has written the request.
    private var pending: [HTTP2Frame.FramePayload] = []
    private var pendingFlush = false

    /// The connection's loop, and so the stream's.
    private let eventLoop: any EventLoop

    init(connection: HTTP2UpstreamConnection, eventLoop: any EventLoop) {
        self.connection = connection
        self.eventLoop = eventLoop
    }

    // MARK: UpstreamConnection

    func lease(to owner: any UpstreamConnectionOwner) -> Bool {
        guard case .fresh = state else { return false }
        state = .leased
        self.owner = owner
        return true
    }

    func send(_ head: UpstreamRequestHead, body: [ByteBuffer], end: Bool) {
        requestWasHead = head.isHead
        let request: HTTP2UpstreamFields.Request
        do {
            request = try HTTP2UpstreamFields.request(head, scheme: connection.origin.transport.scheme)
        } catch {
            // Told after the exchange's send returns, as a failure read from the stream would be.
            failure = error
            return close(after: error)
        }
        // A request without a body ends with its head, though the client's end may not have been read yet: the
        // exchange's end that follows then has nothing to send.
        let endsWithHead = (end || !request.hasBody) && body.allSatisfy { $0.readableBytes == 0 }
        emit(.headers(.init(headers: request.headers, endStream: endsWithHead)))
        if endsWithHead {
            requestEnded = true
            return
        }
        for part in body where part.readableBytes > 0 { write(part) }
        if end { self.end() }
    }

    func write(_ body: ByteBuffer) {
        emit(.data(.init(data: .byteBuffer(body))))
    }

    func end() {
        guard !requestEnded else { return }
        requestEnded = true
        emit(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
    }

    func flush() {
        guard let context else {
            pendingFlush = true
            return
        }
        context.flush()
    }

    func pauseReads() { readsPaused = true }

    func resumeReads() {
        guard readsPaused else { return }
        readsPaused = false
        if let context, reads.release(open: true) { context.read() }
    }

    /// A stream is never reused (RFC 9113 §5.1: its identifier is spent): one whose messages are both complete has
    /// closed by itself; any other is reset (NIOHTTP2 sends RST_STREAM with CANCEL for a stream closed while open).
    func release(reuse: Bool, now: NIODeadline) {
        owner = nil
        guard !(reuse && responseEnded && requestEnded) else {
            if state != .closed { state = .done }
            return
        }
        retireConnectionIfStalled()
        if state != .closed { state = .done }
        context?.close(promise: nil)
    }

    func close() {
        owner = nil
        retireConnectionIfStalled()
        if state != .closed { state = .done }
        context?.close(promise: nil)
    }

    /// An exchange that gives up on a stream still open whose request the upstream's window holds back (the stream
    /// cannot be written, RFC 9113 §6.9): the connection is not given another stream.
    private func retireConnectionIfStalled() {
        guard state == .leased, context != nil, !isWritable else { return }
        connection.flowControlStalled()
    }

    private func emit(_ payload: HTTP2Frame.FramePayload) {
        guard let context else { return pending.append(payload) }
        context.write(wrapOutboundOut(payload), promise: nil)
    }

    /// Ends the stream on the loop's next turn, so that the exchange hears of `error` after the call that caused it.
    /// Nothing of it was sent: the exchange hears at once rather than when NIOHTTP2 retires the unopened stream.
    private func close(after error: any Error) {
        pending = []
        eventLoop.assumeIsolated().execute { [self] in
            self.tellClosed()
            self.context?.close(promise: nil)
        }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isWritable = context.channel.isWritable
        // Let go of, or failed, before its channel was ready: nothing of it goes out.
        guard state == .leased || state == .fresh else { return context.close(promise: nil) }
        for payload in pending { context.write(wrapOutboundOut(payload), promise: nil) }
        pending = []
        if pendingFlush {
            pendingFlush = false
            context.flush()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit(open: !readsPaused) { context.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .leased, owner != nil else { return }
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            answered = true
            receivedHeaders(frame)
        case .data(let frame):
            answered = true
            guard case .byteBuffer(let buffer) = frame.data else { return }
            deliver(buffer.readableBytes > 0 ? .body(buffer) : nil, end: frame.endStream, trailers: nil)
        default:
            break
        }
    }

    private func receivedHeaders(_ frame: HTTP2Frame.FramePayload.Headers) {
        do {
            if finalHeadReceived {
                // RFC 9113 §8.1: a header section after the body is the trailers, and ends the stream.
                let trailers = try HTTP2UpstreamFields.trailers(frame.headers)
                return deliver(nil, end: true, trailers: trailers.readableBytes > 0 ? trailers : nil)
            }
            let head = try HTTP2UpstreamFields.response(
                frame.headers, requestWasHead: requestWasHead, endsStream: frame.endStream)
            if !head.head.isInformational { finalHeadReceived = true }
            deliver(.head(head), end: frame.endStream && finalHeadReceived, trailers: nil)
        } catch {
            // RFC 9113 §8.1.1: a malformed response is a stream error of type PROTOCOL_ERROR; the exchange gets 502.
            failure = error
            context?.close(promise: nil)
        }
    }

    /// Hands `part` and then, when `end`, the response's end to the exchange, as one event.
    private func deliver(_ part: UpstreamResponsePart?, end: Bool, trailers: ByteBuffer?) {
        guard let reader = owner else { return }
        reader.upstreamReading(self) {
            if let part, let owner { owner.upstream(self, received: part) }
            if end, let owner, !responseEnded {
                responseEnded = true
                owner.upstream(self, received: .end(trailers: trailers))
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        owner?.upstreamReadComplete(self)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        owner?.upstreamWritabilityChanged(self)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isWritable = false
        tellClosed()
    }

    /// The stream has closed: the connection counts it, and an exchange still waiting for its response hears why,
    /// with HTTP/2's half of the replay rule.
    private func tellClosed() {
        if state != .closed { connection.streamClosed() }
        state = .closed
        guard let owner else { return }
        self.owner = nil
        if responseEnded { return }
        owner.upstreamClosed(self, error: failure ?? ChannelError.eof, neverProcessed: neverProcessed)
    }

    /// Whether the upstream provably did not process the request, so that the exchange may send it again: the
    /// stream was refused (RFC 9113 §8.7: REFUSED_STREAM), or the upstream's GOAWAY named a last stream below it
    /// (RFC 9113 §6.8: streams above it were not and will not be processed) — and no frame of an answer came.
    private var neverProcessed: Bool {
        guard !answered else { return false }
        guard let closed = failure as? NIOHTTP2Errors.StreamClosed else { return false }
        if closed.errorCode == .refusedStream { return true }
        return connection.goAwayDropped(closed.streamID)
    }
}
