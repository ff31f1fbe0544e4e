import BearerCodec
import NIOCore

/// Keeps the bytes of a head that arrived in pieces, and says when parsing them again is worth it.
///
/// The parser re-reads a head from its start, so parsing after every read would cost O(n²) for a head sent a few
/// bytes at a time (a slow client could make a 32 KiB head cost half a billion byte steps). A head can only be
/// complete once its bytes hold the empty line that ends it (CRLF CRLF), or only refused for its size once the
/// limit is reached; until one of those, the new bytes are appended and the parser is not called: O(n) in all.
enum HeadAccumulator {
    /// Appends `buffer` to `partial` (if any) and leaves the result in `buffer`; true when it should be parsed.
    static func append(_ buffer: inout ByteBuffer, to partial: ByteBuffer?, limits: HeadLimits = HeadLimits())
        -> Bool
    {
        guard var partial else { return true }
        // The empty line may straddle the two pieces: look from three bytes before the new ones.
        let searchFrom = max(partial.readableBytes - 3, 0)
        partial.writeBuffer(&buffer)
        buffer = partial
        if buffer.readableBytes >= limits.headBytes { return true }
        let bytes = buffer.readableBytesUInt8Span
        var index = searchFrom
        while index + 3 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
                return true
            }
            index += 1
        }
        return false
    }
}
