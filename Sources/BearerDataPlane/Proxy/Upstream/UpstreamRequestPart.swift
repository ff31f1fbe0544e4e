import NIOCore

/// A request head written for an upstream, as bytes, with what the response's framing depends on (RFC 9112 §6.3):
/// ``ResponseDecoder`` reads those as the head goes by.
package struct UpstreamRequestHead: Sendable, Equatable {
    package var bytes: ByteBuffer
    /// The body goes as chunks.
    package var chunked: Bool
    /// The method is HEAD: the answer has no body.
    package var isHead: Bool
    /// The request asks to switch protocols: only then may the answer be a `101`.
    package var asksToUpgrade: Bool

    package init(bytes: ByteBuffer, chunked: Bool, isHead: Bool, asksToUpgrade: Bool) {
        self.bytes = bytes
        self.chunked = chunked
        self.isHead = isHead
        self.asksToUpgrade = asksToUpgrade
    }
}

/// What an upstream connection writes (``UpstreamHandler``): NIOHTTP1's `HTTPClientRequestPart` with the head as
/// bytes. Requests carry no trailers (the client's are dropped, SPEC §8).
package enum UpstreamRequestPart: MessagePartConvertible {
    /// Indirect: a part travels in a `NIOAny`, which holds three words inline and boxes anything larger — with the
    /// head inline, every body part and end would cost an allocation (bench/counts.sh: 2 per message).
    indirect case head(UpstreamRequestHead)
    case body(ByteBuffer)
    case end

    package var messagePart: MessagePart {
        switch self {
        case .head(let head): .head(head.bytes, chunked: head.chunked)
        case .body(let body): .body(body)
        case .end: .end(trailers: nil)
        }
    }
}
