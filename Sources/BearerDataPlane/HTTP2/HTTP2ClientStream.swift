import BearerCodec
import BearerTelemetry
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One stream of an HTTP/2 client connection, carried to its ``ProxyConnectionHandler`` and back, on the connection's
/// own pipeline (``HTTP2StreamTable``): no channel, pipeline or multiplexer of its own.
///
/// The request goes in as the HTTP/1.1 bytes the handler reads (``HTTP2RequestHead``; DATA as the body, in chunks when
/// no length was given), so every rule the handler holds for HTTP/1.1 holds per stream, answered and counted as there.
/// The response comes out as the handler's parts. A forwarded head becomes HEADERS with the header section
/// ``HTTP2ResponseFields/forwarded(_:binding:adding:)`` builds from the upstream's; the proxy's own heads are read
/// again by the strict ``ResponseHead`` parser, then ``HTTP2ResponseFields``. Body parts become DATA, the end
/// END_STREAM — on the last frame written, so that a small answer is HEADERS and one DATA frame — or a trailing
/// HEADERS frame with the upstream's trailers. Request trailers are dropped, as they are for HTTP/1.1 clients.
///
/// Flow control is done here, as NIOHTTP2's stream channels do it (RFC 9113 §5.2): DATA the handler does not want yet
/// (it withholds its read while the exchange cannot take more) is held, and the client gets back the window only for
/// what was delivered (``HTTP2InboundWindow``); the stream is writable while fewer than ``highWater`` bytes it wrote
/// wait to go, and its connection is writable, and the handler stops reading its upstream otherwise.
final class HTTP2ClientStream {
    /// Response bytes a stream may have waiting to go before it stops being writable, and the level it becomes
    /// writable again below: NIOHTTP2's stream channels' own watermarks.
    static let highWater = 8196
    static let lowWater = 4092

    private enum RequestState {
        case awaitingHead
        case body(chunked: Bool)
        case ended
    }

    let id: HTTP2StreamID
    private let table: HTTP2StreamTable
    private let metrics: ProxyMetrics
    private let eventLoop: any EventLoop
    /// The exchange's handler, until it has let go of the stream (``handlerLeft()``).
    private(set) var handler: ProxyConnectionHandler?

    // Client → handler.
    private var request = RequestState.awaitingHead
    private var requestWasHead = false
    private var requestEnded: Bool {
        if case .ended = request { return true }
        return false
    }
    /// The request's frames held while the handler does not want them.
    private(set) var heldFrames = HTTP2HeldFrames()
    /// The handler has asked for what comes next: a frame that comes is delivered at once.
    private var reading = false
    /// Frames were delivered in the connection's current read: the handler hears its end (``readComplete()``).
    private var deliveredInRead = false
    private var window: HTTP2InboundWindow

    // Handler → client.
    /// The last frame of the response, not written yet: END_STREAM may still go with it.
    private var heldFrame: HTTP2Frame.FramePayload?
    private var responseEnded = false
    /// The last frame written, for a close to wait on.
    private var lastWritten: EventLoopFuture<Void>?
    /// The handler has closed the stream; what follows is decided.
    private var closing = false
    /// The stream is over: NIOHTTP2 closed it, or it was reset here. Nothing more is written.
    private var closed = false

    // Writability.
    private var waitingBytes = 0
    private var belowWater = true
    private var connectionWritable: Bool
    private var isWritable: Bool { belowWater && connectionWritable }

    init(
        id: HTTP2StreamID, table: HTTP2StreamTable, metrics: ProxyMetrics, eventLoop: any EventLoop,
        windowTarget: Int, connectionWritable: Bool
    ) {
        self.id = id
        self.table = table
        self.metrics = metrics
        self.eventLoop = eventLoop
        self.window = HTTP2InboundWindow(target: windowTarget)
        self.connectionWritable = connectionWritable
    }

    /// Starts `handler` on this stream, and lets it ask for the request.
    func start(_ handler: ProxyConnectionHandler, clientAddress: String?) {
        self.handler = handler
        handler.streamStarted(clientAddress: clientAddress, writable: isWritable)
        handler.streamWantsRead()
    }

    /// The handler has let go of the stream: the table does too.
    func handlerLeft() {
        handler = nil
        stop()
        table.remove(self)
    }

    // MARK: Client → handler

    /// A frame for this stream, from the connection's read.
    func received(_ payload: HTTP2Frame.FramePayload) {
        guard !closed else { return }
        switch payload {
        case .headers, .data:
            break
        default:
            // The rest are NIOHTTP2's, done with: a reset has closed the stream, and PRIORITY and WINDOW_UPDATE say
            // nothing to the exchange. Never held, so a client cannot make a stream that reads nothing keep them.
            return
        }
        if reading {
            deliveredInRead = true
            deliver(payload)
        } else {
            hold(payload)
        }
    }

    private func hold(_ payload: HTTP2Frame.FramePayload) {
        let flowControlled = Self.flowControlled(payload)
        window.hold(flowControlled)
        var isHead = false
        if case .awaitingHead = request { isHead = true }
        heldFrames.hold(payload, flowControlled: flowControlled, isHead: isHead)
    }

    /// The connection's read is over: the handler hears it, and asks for more if it can take more.
    func readComplete() {
        guard deliveredInRead else { return }
        deliveredInRead = false
        reading = false
        handler?.streamReadComplete()
        handler?.streamWantsRead()
    }

    /// The handler wants what comes next: what was held is delivered now, else the next frame will be.
    func read() {
        guard !closed else { return }
        guard !heldFrames.isEmpty else {
            reading = true
            return
        }
        for frame in heldFrames.take() {
            deliver(frame.payload)
            if let increment = window.delivered(frame.flowControlled) { giveWindow(increment) }
            if closed { return }
        }
        handler?.streamReadComplete()
        handler?.streamWantsRead()
    }

    /// NIOHTTP2 told the stream's inbound window.
    func windowChanged(to size: Int) {
        guard !closed, let increment = window.sizeChanged(to: size) else { return }
        giveWindow(increment)
    }

    private func giveWindow(_ increment: Int) {
        table.write(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: increment)), promise: nil)
        table.flush()
    }

    private static func flowControlled(_ payload: HTTP2Frame.FramePayload) -> Int {
        guard case .data(let data) = payload else { return 0 }
        return data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
    }

    private func deliver(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .headers(let headers): receivedHeaders(headers)
        case .data(let data): receivedData(data)
        default: break
        }
    }

    private func receivedHeaders(_ frame: HTTP2Frame.FramePayload.Headers) {
        switch request {
        case .awaitingHead:
            let head: HTTP2RequestHead
            do {
                head = try HTTP2RequestHead.translate(frame.headers, endStream: frame.endStream)
            } catch {
                return refuse(error)
            }
            requestWasHead = head.isHead
            request = frame.endStream ? .ended : .body(chunked: head.body == .chunked)
            handler?.streamRead(head.bytes)
        case .body(let chunked):
            // Trailers: dropped as an HTTP/1.1 client's are; they end the body.
            request = .ended
            if chunked { handler?.streamRead(Self.lastChunk) }
        case .ended:
            break
        }
    }

    private func receivedData(_ frame: HTTP2Frame.FramePayload.Data) {
        guard case .body(let chunked) = request, case .byteBuffer(let bytes) = frame.data else { return }
        if chunked {
            if bytes.readableBytes > 0 {
                // An empty chunk would end the body (RFC 9112 §7.1): empty DATA frames send none.
                var size = ByteBufferAllocator().buffer(capacity: 18)
                size.writeString(String(bytes.readableBytes, radix: 16))
                size.writeString("\r\n")
                handler?.streamRead(size)
                handler?.streamRead(bytes)
                handler?.streamRead(frame.endStream ? Self.crlfLastChunk : Self.crlf)
            } else if frame.endStream {
                handler?.streamRead(Self.lastChunk)
            }
        } else if bytes.readableBytes > 0 {
            handler?.streamRead(bytes)
        }
        if frame.endStream { request = .ended }
    }

    private static let crlf = ByteBuffer(string: "\r\n")
    private static let lastChunk = ByteBuffer(string: "0\r\n\r\n")
    private static let crlfLastChunk = ByteBuffer(string: "\r\n0\r\n\r\n")

    /// A malformed request (RFC 9113 §8.1.1): the stream is reset with `PROTOCOL_ERROR`, and counted as the
    /// HTTP/1.1 refusals are.
    private func refuse(_ error: HTTP2RequestHead.Malformed) {
        request = .ended
        responseEnded = true
        metrics.requestsRefused(reason: "http2_malformed").increment()
        reset(.protocolError)
    }

    /// Resets the stream (RFC 9113 §6.4) and ends it for the handler.
    private func reset(_ code: HTTP2ErrorCode) {
        guard !closed else { return }
        stop()
        table.write(HTTP2Frame(streamID: id, payload: .rstStream(code)), promise: nil)
        table.flush()
        handler?.streamEnd()
    }

    // MARK: Handler → client

    /// Writes `part` of the response; `promise` completes once it has gone (at once for a part with nothing to send,
    /// once what came before it has).
    func write(_ part: MessagePart, promise: EventLoopPromise<Void>?) {
        guard !closed, !responseEnded else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch part {
        case .head(let bytes, _):
            let head = try? ResponseHead.parse(bytes.readableBytesUInt8Span, requestWasHead: requestWasHead)
            guard let head, head.length == bytes.readableBytes else {
                // The handler's own head did not parse: a fault of the proxy's, never sent on as a response.
                metrics.stateErrors(machine: "http2_stream").increment()
                promise?.fail(ChannelError.ioOnClosedChannel)
                responseEnded = true
                return reset(.internalError)
            }
            writeHead(
                HTTP2ResponseFields.head(UpstreamResponse(bytes: bytes, head: head)),
                informational: head.isInformational, promise: promise)
        case .body(let bytes):
            guard bytes.readableBytes > 0 else {
                if let promise { writeHeld(promise: promise) }
                return
            }
            writeHeld(promise: nil)
            heldFrame = .data(.init(data: .byteBuffer(bytes)))
            if let promise { writeHeld(promise: promise) }
        case .end(let trailers):
            responseEnded = true
            if let trailers, trailers.readableBytes > 0 {
                writeHeld(promise: nil)
                heldFrame = .headers(.init(headers: HTTP2ResponseFields.trailers(trailers), endStream: true))
            } else {
                switch heldFrame {
                case .headers(var headers):
                    headers.endStream = true
                    heldFrame = .headers(headers)
                case .data(var data):
                    data.endStream = true
                    heldFrame = .data(data)
                default:
                    heldFrame = .data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))
                }
            }
            writeHeld(promise: promise)
        }
    }

    /// Writes a response's header section: held back, so that END_STREAM may go with it, unless it is an
    /// informational one (RFC 9113 §8.1: never the last) or `promise` waits for it.
    func writeHead(_ fields: HPACKHeaders, informational: Bool, promise: EventLoopPromise<Void>?) {
        guard !closed, !responseEnded else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        writeHeld(promise: nil)
        heldFrame = .headers(.init(headers: fields))
        if informational || promise != nil { writeHeld(promise: promise) }
    }

    /// Writes the frame held back, if there is one; `promise` completes once it has gone (or what went before it).
    func writeHeld(promise: EventLoopPromise<Void>? = nil) {
        guard let frame = heldFrame.take(), !closed else {
            if let promise {
                if let lastWritten { lastWritten.cascade(to: promise) } else { promise.succeed() }
            }
            return
        }
        // A frame's promise tells when its bytes have gone (writability) and what a close waits for. A HEADERS frame
        // that does not end the stream needs none: a reset never drops it, as it does DATA waiting for window.
        var written = promise
        switch frame {
        case .data(let data):
            let bytes = data.data.readableBytes
            let sent = written ?? eventLoop.makePromise()
            written = sent
            if bytes > 0 {
                waiting(bytes)
                sent.futureResult.assumeIsolated().whenComplete { [self] _ in gone(bytes) }
            }
        case .headers(let headers) where headers.endStream:
            written = written ?? eventLoop.makePromise()
        default:
            break
        }
        if let written { lastWritten = written.futureResult }
        table.write(HTTP2Frame(streamID: id, payload: frame), promise: written)
    }

    /// Sends what was written.
    func flush() {
        writeHeld()
        table.flush()
    }

    /// The handler closes the stream. A stream's frames wait in NIOHTTP2's buffers until its connection flushes, and
    /// a reset drops those that wait (RFC 9113 §6.4): the stream ends only once what was written has gone.
    func close(promise: EventLoopPromise<Void>?) {
        guard !closing, !closed else {
            promise?.succeed()
            if closed { handler?.streamEnd() }
            return
        }
        closing = true
        flush()
        let written = lastWritten ?? eventLoop.makeSucceededVoidFuture()
        written.assumeIsolated().whenComplete { [self] _ in
            defer { promise?.succeed() }
            if closed {
                handler?.streamEnd()
            } else if !responseEnded {
                // A response cut short: reset with INTERNAL_ERROR, so that the client never takes it for complete.
                responseEnded = true
                reset(.internalError)
            } else if !requestEnded {
                // The whole response went before the whole request: the client may stop sending (RFC 9113 §8.1).
                reset(.noError)
            }
            // Both sides have ended: the stream has closed, or closes as its last frame goes (``connectionClosed()``).
        }
    }

    /// NIOHTTP2 closed the stream (both sides ended, a reset either way, the connection's end).
    func connectionClosed() {
        stop()
        handler?.streamEnd()
    }

    /// Nothing more is delivered or written: what was held is dropped.
    private func stop() {
        closed = true
        heldFrame = nil
        heldFrames = HTTP2HeldFrames()
    }

    /// The handler's timer is to fire at `deadline`: the connection's does no later.
    func timerWanted(at deadline: NIODeadline) {
        table.timerWanted(at: deadline)
    }

    /// The connection's timer fired: returns when this stream's handler wants it next.
    func timerReached(_ now: NIODeadline) -> NIODeadline {
        handler?.streamTimerReached(now) ?? .distantFuture
    }

    /// The server is shutting down.
    func quiesce() {
        handler?.streamQuiesce()
    }

    // MARK: Writability

    func connectionWritabilityChanged(_ writable: Bool) {
        let was = isWritable
        connectionWritable = writable
        writabilityMayHaveChanged(was)
    }

    private func waiting(_ bytes: Int) {
        let was = isWritable
        waitingBytes += bytes
        if waitingBytes > Self.highWater { belowWater = false }
        writabilityMayHaveChanged(was)
    }

    private func gone(_ bytes: Int) {
        let was = isWritable
        waitingBytes -= bytes
        if waitingBytes < Self.lowWater { belowWater = true }
        writabilityMayHaveChanged(was)
    }

    private func writabilityMayHaveChanged(_ was: Bool) {
        if was != isWritable { handler?.streamWritabilityChanged(isWritable) }
    }
}
