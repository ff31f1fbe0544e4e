import NIOCore
import NIOHTTP1

/// The data plane's response decoder (SPEC §3): an upstream's bytes read by ``BearerCodec``'s strict grammar, which
/// accepts a response only in the form all three reference parsers (llhttp, h11, Go's net/http) accept and frame alike,
/// and refuses everything else with a ``HeadError`` — the exchange answers 502, and the connection closes.
///
/// It delivers what NIOHTTP1's `HTTPResponseDecoder` delivered with `informationalResponseStrategy: .forward`, as
/// bytes rather than strings (``UpstreamResponsePart``): a 1xx as a head alone, a final response as its head, body
/// slices of the bytes read (never copied) and an end with its trailer section — one part per ``next(seenEOF:)``. It
/// holds the bytes it has not read (``append(_:)``) and runs inline in ``UpstreamHandler``, as ``RequestDecoder`` does
/// in the client's (no `ByteToMessageHandler`, no parts in a `NIOAny`; docs/benchmarks.md). How a response is framed
/// depends on the request it answers (RFC 9112 §6.3: no body after HEAD; a `101` only to a request that asked to
/// upgrade), so the connection tells it of each request head it sends (``requestSent(_:)``). After a response that ends
/// the connection it reads nothing more; after a `101` the bytes that follow are the new protocol's, held for the
/// tunnel (``takeUndecodedBytes()``).
package struct ResponseDecoder {
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
        package var isHead: Bool
        package var asksToUpgrade: Bool
    }

    private enum State {
        /// Between responses, or inside a head.
        case head
        /// In a Content-Length or chunked body.
        case body(BodyReader)
        /// In a body that ends when the upstream closes (RFC 9112 §6.3 rule 8).
        case untilClose
        /// The response is complete: its end is next (then ``afterEnd``).
        case ending
        /// The connection's last response has been read.
        case ended
        /// A `101` has been read: what follows is the new protocol's.
        case switched
    }

    /// Responses are the upstream's, not a client's: NIOHTTP1's head limit (llhttp's 80 KiB), and more field lines
    /// than a request may carry (servers send long lists of `Set-Cookie` and security headers).
    package static let limits = HeadLimits(headBytes: 80 * 1024, targetBytes: 0, fields: 256)

    /// The most bytes the decoder holds: a head in progress (refused at ``limits``), and the new protocol's first
    /// bytes behind a `101` until the tunnel takes them.
    static let bufferLimit = limits.headBytes + 64 * 1024

    private var requests = CircularBuffer<Request>(initialCapacity: 2)
    private var state = State.head
    /// Where an end leads: the next head, the end of the connection, or the new protocol.
    private var afterEnd = State.head
    private var pending = PendingHead()
    /// The trailer section of the chunked body being read, as it came (``ChunkedBody`` validated and bounded it).
    private var trailerBytes: ByteBuffer?
    /// The bytes not read yet: a head in pieces, or the new protocol's first bytes behind a `101`.
    private var held = HeldBytes()

    package init() {}

    /// A request head went to the upstream: its response is framed by what it asked.
    package mutating func requestSent(_ head: UpstreamRequestHead) {
        requests.append(Request(isHead: head.isHead, asksToUpgrade: head.asksToUpgrade))
    }

    /// Takes the bytes the upstream sent next.
    package mutating func append(_ bytes: ByteBuffer) {
        held.append(bytes)
    }

    /// The next part, or nil when more bytes are needed (or none are wanted). `seenEOF`: the connection has closed —
    /// a body delimited by the close ends, a head in pieces is parsed once more (a malformed one refused for what it
    /// is), and a response cut short is ``Failure/truncated``. Throws the grammar's ``HeadError``, a ``Failure``, or
    /// `ByteToMessageDecoderError.PayloadTooLargeError` when more than ``bufferLimit`` bytes would be held.
    package mutating func next(seenEOF: Bool = false) throws -> UpstreamResponsePart? {
        if let part = try read(atEOF: seenEOF) { return part }
        try held.settle(limit: Self.bufferLimit)
        return nil
    }

    /// Whether it holds bytes it has not read: between responses, the start of an answer to no request sent.
    /// `mutating` though it changes nothing: the handler's stored decoder is then reached in place, where a getter
    /// called from another module reads a copy of the whole decoder first (four retains and releases a request,
    /// bench/counts.sh).
    package mutating func holdsUnreadBytes() -> Bool { held.buffer.readableBytes > 0 }

    /// The bytes not read — after a `101`, the new protocol's first — for the tunnel; the decoder keeps none.
    package mutating func takeUndecodedBytes() -> ByteBuffer? {
        held.take()
    }

    private mutating func read(atEOF: Bool) throws -> UpstreamResponsePart? {
        switch state {
        case .head:
            guard held.buffer.readableBytes > 0 else { return nil }
            return try decodeHead(atEOF: atEOF)
        case .body(var reader):
            var data: ByteBuffer?
            var trailers = trailerBytes
            let complete = try reader.read(&held.buffer, oneRun: true) {
                data = $0
            } trailer: {
                var bytes = $0
                if trailers == nil {
                    trailers = bytes
                } else {
                    trailers!.writeBuffer(&bytes)
                }
            }
            trailerBytes = trailers
            state = complete ? .ending : .body(reader)
            if let data { return .body(data) }
            if complete { return end() }
            if atEOF { throw Failure.truncated }
            return nil
        case .untilClose:
            if held.buffer.readableBytes > 0 { return .body(held.buffer.readSlice(length: held.buffer.readableBytes)!) }
            return atEOF ? end() : nil
        case .ending:
            return end()
        case .ended:
            // Nobody asked for these bytes, and the connection will not be used again.
            held.buffer.moveReaderIndex(to: held.buffer.writerIndex)
            return nil
        case .switched:
            return nil
        }
    }

    // MARK: Heads

    private mutating func decodeHead(atEOF: Bool) throws -> UpstreamResponsePart? {
        guard let request = requests.first else { throw Failure.unsolicited }
        guard atEOF || pending.worthParsing(held.buffer, limit: Self.limits.headBytes) else { return nil }
        guard
            let head = try ResponseHead.parse(
                held.buffer.readableBytesUInt8Span, requestWasHead: request.isHead,
                upgradeRequested: request.asksToUpgrade, limits: Self.limits)
        else {
            if atEOF { throw Failure.truncated }
            pending.parsed(held.buffer)
            return nil
        }
        pending = PendingHead()
        let response = UpstreamResponse(bytes: held.buffer.readSlice(length: head.length)!, head: head)
        // A 1xx is followed by the final response to the same request (RFC 9110 §15.2).
        if head.isInformational { return .head(response) }
        requests.removeFirst()
        if head.switchesProtocols {
            state = .ending
            afterEnd = .switched
            return .head(response)
        }
        afterEnd = head.keepAlive ? .head : .ended
        switch head.framing {
        case .none: state = .ending
        case .length(let length): state = .body(BodyReader(length: length))
        case .chunked: state = .body(BodyReader(chunked: ChunkedBody()))
        case .untilClose: state = .untilClose
        }
        return .head(response)
    }

    // MARK: Ends

    private mutating func end() -> UpstreamResponsePart {
        state = afterEnd
        afterEnd = .head
        defer { trailerBytes = nil }
        return .end(trailers: trailerBytes)
    }
}
