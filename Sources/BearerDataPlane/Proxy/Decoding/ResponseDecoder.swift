import BearerCodec
import NIOCore
import NIOHTTP1

/// The data plane's response decoder (#24): an upstream's bytes read by ``BearerCodec``'s strict grammar, which
/// accepts a response only in the form all three reference parsers (llhttp, h11, Go's net/http) accept and frame
/// alike, and refuses everything else with a ``HeadError`` — the exchange answers 502, and the connection closes.
///
/// It delivers what NIOHTTP1's `HTTPResponseDecoder` delivered with `informationalResponseStrategy: .forward`, as
/// bytes rather than strings (``UpstreamResponsePart``, #24 condition 5): a 1xx as a head alone, a final response as
/// its head, body slices of the bytes read (never copied) and an end with its trailer section. How a response is framed depends on the request it answers (RFC 9112 §6.3: no body after HEAD; a
/// `101` only to a request that asked to upgrade), so the decoder watches the request heads written through it.
/// After a response that ends the connection it reads nothing more; after a `101` the bytes that follow are the new
/// protocol's, held until the decoder leaves the pipeline and then handed on to the tunnel.
package struct ResponseDecoder: WriteObservingByteToMessageDecoder {
    package typealias InboundOut = UpstreamResponsePart
    package typealias OutboundIn = UpstreamRequestPart

    /// Why an upstream's bytes are not a response the proxy can relay, beyond the grammar's ``HeadError``.
    package enum Failure: Error, Equatable {
        /// Bytes with no request waiting for them.
        case unsolicited
        /// The connection closed inside a response.
        case truncated

        /// The reason as the problem's detail names it (as ``HeadError/label`` does for the grammar's).
        package var label: String {
            switch self {
            case .unsolicited: "unsolicited"
            case .truncated: "truncated"
            }
        }
    }

    /// What the response's framing depends on in the request it answers.
    private struct Request {
        var isHead: Bool
        var asksToUpgrade: Bool
    }

    private enum State {
        /// Between responses, or inside a head.
        case head
        /// In a Content-Length or chunked body.
        case body(BodyReader)
        /// In a body that ends when the upstream closes (RFC 9112 §6.3 rule 8).
        case untilClose
        /// The connection's last response has been read.
        case ended
        /// A `101` has been read: what follows is the new protocol's.
        case switched
    }

    /// Responses are the upstream's, not a client's: NIOHTTP1's head limit (llhttp's 80 KiB), and more field lines
    /// than a request may carry (servers send long lists of `Set-Cookie` and security headers).
    package static let limits = HeadLimits(headBytes: 80 * 1024, targetBytes: 0, fields: 256)

    /// The most bytes the decoder's handler may hold: a head in progress (refused at ``limits``), and the new
    /// protocol's first bytes behind a `101` until the tunnel takes them.
    package static let bufferLimit = limits.headBytes + 64 * 1024

    private var requests = CircularBuffer<Request>(initialCapacity: 2)
    private var state = State.head
    /// The current response is the connection's last (RFC 9112 §9.3).
    private var last = false
    private var pending = PendingHead()
    /// The trailer section of the chunked body being read, as it came (``ChunkedBody`` validated and bounded it).
    private var trailerBytes: ByteBuffer?

    package init() {}

    package mutating func write(data: UpstreamRequestPart) {
        guard case .head(let head) = data else { return }
        requests.append(Request(isHead: head.isHead, asksToUpgrade: head.asksToUpgrade))
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        switch state {
        case .head:
            return try decodeHead(context: context, buffer: &buffer, atEOF: false)
        case .body(var reader):
            let complete = try reader.read(&buffer) {
                context.fireChannelRead(wrapInboundOut(.body($0)))
            } trailer: {
                var bytes = $0
                if trailerBytes == nil {
                    trailerBytes = bytes
                } else {
                    trailerBytes!.writeBuffer(&bytes)
                }
            }
            guard complete else {
                state = .body(reader)
                return .needMoreData
            }
            end(context: context)
            return .continue
        case .untilClose:
            guard buffer.readableBytes > 0 else { return .needMoreData }
            context.fireChannelRead(wrapInboundOut(.body(buffer.readSlice(length: buffer.readableBytes)!)))
            return .needMoreData
        case .ended:
            // Nobody asked for these bytes, and the connection will not be used again.
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        case .switched:
            return .needMoreData
        }
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        guard seenEOF else {
            // The decoder leaves the pipeline: after a `101`, for the tunnel, which gets the bytes that came right
            // behind the handshake (NIOHTTP1's `.forwardBytes`); otherwise the connection is closing.
            if case .switched = state, buffer.readableBytes > 0 {
                context.fireChannelRead(NIOAny(buffer.readSlice(length: buffer.readableBytes)!))
            }
            return .needMoreData
        }
        switch state {
        case .head where buffer.readableBytes > 0:
            // A head in progress is parsed once more, so that a malformed one is refused for what it is.
            return try decodeHead(context: context, buffer: &buffer, atEOF: true)
        case .head, .ended, .switched:
            return .needMoreData
        case .untilClose:
            _ = try decode(context: context, buffer: &buffer)
            end(context: context)
            return .needMoreData
        case .body:
            let decoding = try decode(context: context, buffer: &buffer)
            if case .head = state, decoding == .continue { return .continue }
            if case .ended = state { return .needMoreData }
            throw Failure.truncated
        }
    }

    // MARK: Heads

    private mutating func decodeHead(context: ChannelHandlerContext, buffer: inout ByteBuffer, atEOF: Bool) throws
        -> DecodingState
    {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        guard let request = requests.first else { throw Failure.unsolicited }
        guard atEOF || pending.worthParsing(buffer, limit: Self.limits.headBytes) else { return .needMoreData }
        guard
            let head = try ResponseHead.parse(
                buffer.readableBytesUInt8Span, requestWasHead: request.isHead,
                upgradeRequested: request.asksToUpgrade, limits: Self.limits)
        else {
            if atEOF { throw Failure.truncated }
            pending.parsed(buffer)
            return .needMoreData
        }
        pending = PendingHead()
        let response = UpstreamResponse(bytes: buffer.readSlice(length: head.length)!, head: head)
        context.fireChannelRead(wrapInboundOut(.head(response)))
        // A 1xx is followed by the final response to the same request (RFC 9110 §15.2).
        if head.isInformational { return .continue }
        requests.removeFirst()
        if head.switchesProtocols {
            context.fireChannelRead(wrapInboundOut(.end(trailers: nil)))
            state = .switched
            return .continue
        }
        last = !head.keepAlive
        switch head.framing {
        case .none: end(context: context)
        case .length(let length): state = .body(BodyReader(length: length))
        case .chunked: state = .body(BodyReader(chunked: ChunkedBody()))
        case .untilClose: state = .untilClose
        }
        return .continue
    }

    // MARK: Ends

    private mutating func end(context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(.end(trailers: takeTrailers())))
        state = last ? .ended : .head
    }

    /// The trailer section read, if there was one.
    private mutating func takeTrailers() -> ByteBuffer? {
        defer { trailerBytes = nil }
        return trailerBytes
    }
}
