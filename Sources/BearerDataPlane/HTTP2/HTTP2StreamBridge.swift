import BearerCodec
import BearerTelemetry
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Carries one HTTP/2 stream to a ``ProxyConnectionHandler`` and back: the stream's request becomes the HTTP/1.1
/// bytes that handler reads (``HTTP2RequestHead``, DATA as the body, in chunks when no length was given), and the
/// handler's framed answer is read again by the strict ``ResponseDecoder`` and sent as HEADERS and DATA frames
/// (``HTTP2ResponseFields``). One stream is one exchange: the handler sees a connection that carries a single
/// request, so every rule it holds for HTTP/1.1 holds per stream, answered and counted as there.
///
/// Request trailers are dropped, as they are for HTTP/1.1 clients; response trailers the upstream sent in a chunked
/// body go out as a trailing HEADERS frame. Backpressure is the handler's own: it withholds `read()` while the
/// exchange cannot take more, and the stream then gives the client no more window (RFC 9113 §5.2); the stream's
/// writability follows the client's window, and the handler stops reading its upstream while it is not writable.
final class HTTP2StreamBridge: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum RequestState {
        case awaitingHead
        case body(chunked: Bool)
        case ended
    }

    private let metrics: ProxyMetrics
    private var request = RequestState.awaitingHead
    private var requestEnded: Bool {
        if case .ended = request { return true }
        return false
    }
    private var responses = ResponseDecoder()
    /// A final response head not sent yet: it goes with END_STREAM when the response turns out to end right after.
    private var heldHead: HPACKHeaders?
    /// END_STREAM has been written.
    private var responseEnded = false
    /// The last frame written, for a close to wait on.
    private var lastWritten: EventLoopFuture<Void>?
    /// The handler has closed the stream; what follows is decided.
    private var closing = false

    init(metrics: ProxyMetrics) {
        self.metrics = metrics
    }

    // MARK: Client → handler

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers): receivedHeaders(headers, context: context)
        case .data(let data): receivedData(data, context: context)
        default: break
        }
    }

    private func receivedHeaders(_ frame: HTTP2Frame.FramePayload.Headers, context: ChannelHandlerContext) {
        switch request {
        case .awaitingHead:
            let head: HTTP2RequestHead
            do {
                head = try HTTP2RequestHead.translate(frame.headers, endStream: frame.endStream)
            } catch {
                return refuse(error, context: context)
            }
            responses.requestSent(
                UpstreamRequestHead(bytes: ByteBuffer(), chunked: false, isHead: head.isHead, asksToUpgrade: false))
            request = frame.endStream ? .ended : .body(chunked: head.body == .chunked)
            context.fireChannelRead(wrapInboundOut(head.bytes))
        case .body(let chunked):
            // Trailers: dropped as an HTTP/1.1 client's are; they end the body.
            request = .ended
            if chunked { context.fireChannelRead(wrapInboundOut(Self.lastChunk)) }
        case .ended:
            break
        }
    }

    private func receivedData(_ frame: HTTP2Frame.FramePayload.Data, context: ChannelHandlerContext) {
        guard case .body(let chunked) = request, case .byteBuffer(let bytes) = frame.data else { return }
        if chunked {
            if bytes.readableBytes > 0 {
                // An empty chunk would end the body (RFC 9112 §7.1): empty DATA frames send none.
                var size = context.channel.allocator.buffer(capacity: 18)
                size.writeString(String(bytes.readableBytes, radix: 16))
                size.writeString("\r\n")
                context.fireChannelRead(wrapInboundOut(size))
                context.fireChannelRead(wrapInboundOut(bytes))
                context.fireChannelRead(wrapInboundOut(frame.endStream ? Self.crlfLastChunk : Self.crlf))
            } else if frame.endStream {
                context.fireChannelRead(wrapInboundOut(Self.lastChunk))
            }
        } else if bytes.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        if frame.endStream { request = .ended }
    }

    private static let crlf = ByteBuffer(string: "\r\n")
    private static let lastChunk = ByteBuffer(string: "0\r\n\r\n")
    private static let crlfLastChunk = ByteBuffer(string: "\r\n0\r\n\r\n")

    /// A malformed request (RFC 9113 §8.1.1): the stream is reset with `PROTOCOL_ERROR`, and counted as the
    /// HTTP/1.1 refusals are.
    private func refuse(_ error: HTTP2RequestHead.Malformed, context: ChannelHandlerContext) {
        request = .ended
        responseEnded = true
        metrics.requestsRefused(reason: "http2_malformed").increment()
        context.writeAndFlush(wrapOutboundOut(.rstStream(.protocolError)), promise: nil)
        context.close(promise: nil)
    }

    // MARK: Handler → client

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        responses.append(unwrapOutboundIn(data))
        do {
            try sendResponseParts(context: context, seenEOF: false, promise: promise)
        } catch {
            // The handler's own bytes did not decode: a fault of the proxy's, never sent on as a response.
            metrics.stateErrors(machine: "http2_stream").increment()
            responseEnded = true
            context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
            context.close(promise: nil)
        }
    }

    /// Sends what the handler's bytes decode to; `promise` completes with the last frame written from them (or at
    /// once when they completed no part, their bytes being held by the decoder). Throws what the decoder threw.
    private func sendResponseParts(
        context: ChannelHandlerContext, seenEOF: Bool, promise: EventLoopPromise<Void>?
    ) throws {
        var frames: [HTTP2Frame.FramePayload] = []
        // A head, a body part, the end: room for the usual response at once, not grown a frame at a time.
        frames.reserveCapacity(4)
        defer {
            if !seenEOF, let held = heldHead.take() {
                // The head waits no longer than the handler's write: it may be all there is until the upstream sends
                // more.
                frames.append(.headers(.init(headers: held)))
            }
            if let last = frames.popLast() {
                for frame in frames { context.write(wrapOutboundOut(frame), promise: nil) }
                let written = promise ?? context.eventLoop.makePromise()
                lastWritten = written.futureResult
                context.write(wrapOutboundOut(last), promise: written)
            } else if let promise {
                if let lastWritten { lastWritten.cascade(to: promise) } else { promise.succeed() }
            }
        }
        do {
            while let part = try responses.next(seenEOF: seenEOF) {
                switch part {
                case .head(let response):
                    if let held = heldHead.take() { frames.append(.headers(.init(headers: held))) }
                    if response.head.isInformational {
                        frames.append(.headers(.init(headers: HTTP2ResponseFields.head(response))))
                    } else {
                        heldHead = HTTP2ResponseFields.head(response)
                    }
                case .body(let bytes):
                    if let held = heldHead.take() { frames.append(.headers(.init(headers: held))) }
                    if bytes.readableBytes > 0 { frames.append(.data(.init(data: .byteBuffer(bytes)))) }
                case .end(let trailers):
                    responseEnded = true
                    if let held = heldHead.take() {
                        if let trailers {
                            frames.append(.headers(.init(headers: held)))
                            frames.append(
                                .headers(.init(headers: HTTP2ResponseFields.trailers(trailers), endStream: true)))
                        } else {
                            frames.append(.headers(.init(headers: held, endStream: true)))
                        }
                    } else if let trailers {
                        frames.append(.headers(.init(headers: HTTP2ResponseFields.trailers(trailers), endStream: true)))
                    } else if case .data(var data) = frames.last {
                        data.endStream = true
                        frames[frames.count - 1] = .data(data)
                    } else {
                        frames.append(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
                    }
                }
            }
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard !closing else {
            promise?.succeed()
            return
        }
        closing = true
        if !responseEnded {
            // A body delimited by the close ends with it, and END_STREAM says so.
            try? sendResponseParts(context: context, seenEOF: true, promise: nil)
            context.flush()
        }
        // A stream's frames wait in NIOHTTP2's buffers until its connection flushes, and a reset drops those that
        // wait (RFC 9113 §6.4): the stream ends only once what was written has gone.
        let written = lastWritten ?? context.eventLoop.makeSucceededVoidFuture()
        written.assumeIsolated().whenComplete { [self] _ in
            if !responseEnded {
                // A response cut short: reset with INTERNAL_ERROR, so that the client never takes it for complete.
                responseEnded = true
                context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
            } else if requestEnded {
                // Both sides have ended: the stream has closed, or closes as its last frame goes.
                promise?.succeed()
                return
            } else {
                // The whole response went before the whole request: the client may stop sending (RFC 9113 §8.1).
                context.writeAndFlush(wrapOutboundOut(.rstStream(.noError)), promise: nil)
            }
            // Half-closing a stream's output is ending it, done above; lingering to drain the client's body has no
            // purpose on a stream, whose reset leaves the connection intact.
            context.close(mode: .all, promise: promise)
        }
    }
}
