import BearerCodec
import BearerHTTP
import NIOCore
import NIOHTTP1

/// The data plane's request decoder (#24): the client's bytes read by ``BearerCodec``'s strict grammar, which accepts
/// a message only in the form all three reference parsers (llhttp, h11, Go's net/http) accept and frame alike, and
/// refuses everything else with a ``HeadError`` (answered by ``ProxyConnectionHandler/errorCaught(context:error:)``).
///
/// It delivers what NIOHTTP1's `HTTPRequestDecoder` delivered — a head, body slices of the bytes read (never
/// copied), an end without trailers (the proxy drops trailers, SPEC §8) — so the machines above it are unchanged.
/// Like every HTTP/1.1 server's decoder it reads nothing after the connection's last request: one that does not
/// keep the connection, or asks to switch protocols. After an upgrade the bytes that follow are held, and handed to
/// the WebSocket tunnel when the decoder leaves the pipeline (`ByteToMessageHandler`'s `.forwardBytes`, RFC 6455
/// §4.1); after any other last request they are dropped unread.
package struct RequestDecoder: ByteToMessageDecoder {
    package typealias InboundOut = ClientRequestPart

    private enum State {
        /// Between requests, or inside a head.
        case head
        /// In a body.
        case body(BodyReader)
        /// The connection's last request has been read.
        case ended(upgraded: Bool)
    }

    private let limits: HeadLimits
    private var state = State.head
    /// Set when the current request is the connection's last: true when it asked to switch protocols.
    private var lastUpgraded: Bool?
    private var pending = PendingHead()

    package init(limits: HeadLimits) {
        self.limits = limits
    }

    /// The most bytes the decoder's handler may hold (its `maximumBufferSize`; more closes the connection). A head
    /// in progress is parsed, and refused, once it reaches its limit, and bodies are handed on as they come; only
    /// the bytes behind an upgrade request are held, until the upstream answers — and a WebSocket client sends
    /// nothing before the `101` (RFC 6455 §4.1), so 64 KiB past a whole head is room enough.
    package static func bufferLimit(_ limits: HeadLimits) -> Int {
        limits.headBytes + 64 * 1024
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        switch state {
        case .head:
            return try decodeHead(context: context, buffer: &buffer, atEOF: false)
        case .body(var reader):
            let complete = try reader.read(&buffer) { context.fireChannelRead(wrapInboundOut(.body($0))) }
            guard complete else {
                state = .body(reader)
                return .needMoreData
            }
            end(context: context)
            return .continue
        case .ended(let upgraded):
            // After an upgrade the bytes are the new protocol's, kept for the tunnel (reading stops meanwhile: the
            // exchange reads nothing until the upstream answers); after a last request they are no one's.
            if !upgraded { buffer.moveReaderIndex(to: buffer.writerIndex) }
            return .needMoreData
        }
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        switch state {
        case .head where buffer.readableBytes > 0 && seenEOF:
            // At the end of the input a head in progress is parsed once more, so that a malformed one is refused for
            // what it is rather than dropped as incomplete.
            return try decodeHead(context: context, buffer: &buffer, atEOF: true)
        case .ended(upgraded: true) where !seenEOF && buffer.readableBytes > 0:
            // The decoder leaves the pipeline for a tunnel: the new protocol's bytes that came right behind the
            // handshake go on to it, as NIOHTTP1's `.forwardBytes` does.
            context.fireChannelRead(NIOAny(buffer.readSlice(length: buffer.readableBytes)!))
            return .needMoreData
        default:
            return try decode(context: context, buffer: &buffer)
        }
    }

    // MARK: Heads

    private mutating func decodeHead(context: ChannelHandlerContext, buffer: inout ByteBuffer, atEOF: Bool) throws
        -> DecodingState
    {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        guard atEOF || pending.worthParsing(buffer, limit: limits.headBytes) else { return .needMoreData }
        guard let head = try RequestHead.parse(buffer.readableBytesUInt8Span, limits: limits) else {
            pending.parsed(buffer)
            return .needMoreData
        }
        pending = PendingHead()
        let request = ClientRequest(
            line: Self.requestLine(head, in: buffer), bytes: buffer.readSlice(length: head.length)!, parsed: head)
        if head.asksToUpgrade {
            lastUpgraded = true
        } else if !head.keepAlive || head.minorVersion == 0 {
            lastUpgraded = false
        }
        context.fireChannelRead(wrapInboundOut(.head(request)))
        switch head.framing {
        case .none, .untilClose: end(context: context)
        case .length(let length): state = .body(BodyReader(length: length))
        case .chunked: state = .body(BodyReader(chunked: ChunkedBody()))
        }
        return .continue
    }

    /// The request line as NIOHTTP1's head, without fields: the checks read those from the bytes.
    private static func requestLine(_ head: RequestHead, in buffer: ByteBuffer) -> HTTPRequestHead {
        let start = buffer.readerIndex
        func string(_ range: Range<Int>) -> String {
            buffer.getString(at: start + range.lowerBound, length: range.count) ?? ""
        }
        return HTTPRequestHead(
            version: HTTPVersion(major: 1, minor: Int(head.minorVersion)),
            // The token as received: `HTTPMethod(rawValue:)` names M-SEARCH `.MSEARCH`, which NIO writes as
            // `MSEARCH` (HTTPMethod+Wire.swift).
            method: HTTPMethod(rawValue: string(head.method)).asReceived, uri: string(head.target))
    }

    // MARK: Ends

    private mutating func end(context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(.end))
        if let lastUpgraded {
            state = .ended(upgraded: lastUpgraded)
        } else {
            state = .head
        }
    }
}
