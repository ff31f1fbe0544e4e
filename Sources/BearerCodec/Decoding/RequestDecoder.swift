import NIOCore
import NIOHTTP1

/// The data plane's request decoder (SPEC §3): the client's bytes read by ``BearerCodec``'s strict grammar, which
/// accepts a message only in the form all three reference parsers (llhttp, h11, Go's net/http) accept and frame alike,
/// and refuses everything else with a ``HeadError`` (answered by ``ProxyConnectionHandler/decodeFailed(_:)``).
///
/// It delivers what NIOHTTP1's `HTTPRequestDecoder` delivered — a head, body slices of the bytes read (never
/// copied), an end without trailers (the proxy drops trailers, SPEC §8) — one part per ``next(seenEOF:)``, so the
/// machines above it are unchanged. It holds the bytes it has not read itself (``append(_:)``) and runs inline in
/// ``ProxyConnectionHandler``: no handler of its own, since a part that crossed the pipeline as a `NIOAny` cost a
/// dynamic cast and a generic-metadata lookup, and `ByteToMessageHandler`'s bookkeeping more (docs/benchmarks.md).
///
/// Like every HTTP/1.1 server's decoder it reads nothing after the connection's last request: one that does not
/// keep the connection (``ClientRequest/keepAlive``), or asks to switch protocols. After an upgrade the bytes that
/// follow are held for the WebSocket tunnel (``takeUndecodedBytes()``, RFC 6455 §4.1); after any other last request
/// they are dropped unread.
package struct RequestDecoder {
    private enum State {
        /// Between requests, or inside a head.
        case head
        /// In a body.
        case body(BodyReader)
        /// The request has ended (its head said it has no body, or its body's last byte was read): `.end` is next.
        case ending
        /// The connection's last request has been read.
        case ended(upgraded: Bool)
    }

    private let limits: HeadLimits
    private var state = State.head
    /// Set when the current request is the connection's last: true when it asked to switch protocols.
    private var lastUpgraded: Bool?
    private var pending = PendingHead()
    /// The bytes not read yet: a head in pieces, or the new protocol's first bytes behind an upgrade.
    private var held = HeldBytes()

    package init(limits: HeadLimits) {
        self.limits = limits
    }

    /// The most bytes the decoder holds (more refuses the connection, ``next(seenEOF:)``). A head in progress is
    /// parsed, and refused, once it reaches its limit, and bodies are handed on as they come; only the bytes behind
    /// an upgrade request are held, until the upstream answers — and a WebSocket client sends nothing before the
    /// `101` (RFC 6455 §4.1), so 64 KiB past a whole head is room enough.
    static func bufferLimit(_ limits: HeadLimits) -> Int {
        limits.headBytes + 64 * 1024
    }

    /// Takes the bytes the client sent next.
    package mutating func append(_ bytes: ByteBuffer) {
        held.append(bytes)
    }

    /// The next part, or nil when more bytes are needed (or, after the last request, none are wanted). `seenEOF`:
    /// the input has ended, and a head in pieces is parsed once more, so that a malformed one is refused for what
    /// it is rather than dropped as incomplete. Throws the grammar's ``HeadError``, or
    /// `ByteToMessageDecoderError.PayloadTooLargeError` when more than ``bufferLimit(_:)`` bytes would be held.
    package mutating func next(seenEOF: Bool = false) throws -> ClientRequestPart? {
        if let part = try read(atEOF: seenEOF) { return part }
        try held.settle(limit: Self.bufferLimit(limits))
        return nil
    }

    /// The bytes not read — after an upgrade request, the new protocol's first — for the tunnel; the decoder keeps
    /// none.
    package mutating func takeUndecodedBytes() -> ByteBuffer? {
        held.take()
    }

    private mutating func read(atEOF: Bool) throws -> ClientRequestPart? {
        switch state {
        case .head:
            return try decodeHead(atEOF: atEOF)
        case .body(var reader):
            var data: ByteBuffer?
            let complete = try reader.read(&held.buffer, oneRun: true) { data = $0 }
            state = complete ? .ending : .body(reader)
            if let data { return .body(data) }
            return complete ? end() : nil
        case .ending:
            return end()
        case .ended(let upgraded):
            // After an upgrade the bytes are the new protocol's, kept for the tunnel (reading stops meanwhile: the
            // exchange reads nothing until the upstream answers); after a last request they are no one's.
            if !upgraded { held.buffer.moveReaderIndex(to: held.buffer.writerIndex) }
            return nil
        }
    }

    // MARK: Heads

    private mutating func decodeHead(atEOF: Bool) throws -> ClientRequestPart? {
        guard held.buffer.readableBytes > 0 else { return nil }
        guard atEOF || pending.worthParsing(held.buffer, limit: limits.headBytes) else { return nil }
        guard let head = try RequestHead.parse(held.buffer.readableBytesUInt8Span, limits: limits) else {
            pending.parsed(held.buffer)
            return nil
        }
        pending = PendingHead()
        let request = ClientRequest(
            line: RequestLine(head, in: held.buffer), bytes: held.buffer.readSlice(length: head.length)!,
            parsed: head)
        if head.asksToUpgrade {
            lastUpgraded = true
        } else if !request.keepAlive {
            lastUpgraded = false
        }
        switch head.framing {
        case .none, .untilClose: state = .ending
        case .length(let length): state = .body(BodyReader(length: length))
        case .chunked: state = .body(BodyReader(chunked: ChunkedBody()))
        }
        return .head(request)
    }

    // MARK: Ends

    private mutating func end() -> ClientRequestPart {
        if let lastUpgraded {
            state = .ended(upgraded: lastUpgraded)
        } else {
            state = .head
        }
        return .end
    }
}
