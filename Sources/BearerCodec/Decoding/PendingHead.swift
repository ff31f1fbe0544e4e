import NIOCore

/// When a request head that has not arrived in full is worth parsing again.
///
/// ``BearerCodec``'s parser reads a head from its first byte each time; run on every read, a head sent a byte at a
/// time would cost a parse per byte — quadratic work, a cheap way to make the proxy burn CPU. So a head is parsed
/// when its first bytes arrive (most heads arrive whole), then again only once its bytes have doubled since the
/// last parse (amortised linear), once they reach the size limit (to refuse it), or once the bytes not yet searched
/// hold the end of a head: LF, then LF or CRLF. Any such end is the head's real end or a malformation the parse
/// refuses, so a valid head is never delayed, and a malformed one is refused by its end at the latest.
struct PendingHead {
    /// The head's bytes when it was last parsed; 0 before the first parse.
    private var parsedLength = 0
    /// How many of the head's bytes the search for its end has looked at.
    private var searched = 0

    init() {}

    mutating func worthParsing(_ buffer: ByteBuffer, limit: Int) -> Bool {
        let count = buffer.readableBytes
        if parsedLength == 0 || count >= limit || count >= 2 * parsedLength { return true }
        let bytes = buffer.readableBytesUInt8Span
        // A two- or three-byte end that began in the bytes already searched is found too.
        var index = max(searched - 2, 0)
        searched = count
        while index + 1 < count {
            if bytes[index] == UInt8(ascii: "\n") {
                let next = bytes[index + 1]
                if next == UInt8(ascii: "\n") { return true }
                if next == UInt8(ascii: "\r"), index + 2 < count, bytes[index + 2] == UInt8(ascii: "\n") { return true }
            }
            index += 1
        }
        return false
    }

    /// The head was parsed at its current length and needs more bytes.
    package mutating func parsed(_ buffer: ByteBuffer) {
        parsedLength = buffer.readableBytes
        searched = parsedLength
    }
}
