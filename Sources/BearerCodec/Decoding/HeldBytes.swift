import NIOCore

/// The bytes a decoder has been given and not read yet: a head in pieces, or a new protocol's first bytes behind an
/// upgrade. ``RequestDecoder`` and ``ResponseDecoder`` each hold theirs in one, and read ``buffer`` in place.
struct HeldBytes {
    /// The bytes not read yet; the decoder reads them in place.
    package var buffer: ByteBuffer
    /// Put in ``buffer``'s place once it is read to its end: a buffer kept would keep the channel's receive buffer,
    /// which NIO reuses for the next read only when nothing else holds it. (An instance's own, not a `static let`:
    /// this is touched on every read, and a global's lazy initialisation check costs on each.)
    private let empty = ByteBuffer()

    init() {
        buffer = empty
    }

    /// Takes the bytes read next: the read itself when nothing is held (no copy), else appended to what is.
    package mutating func append(_ bytes: ByteBuffer) {
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer.writeBuffer(&bytes)
        }
    }

    /// Called when the decoder needs more bytes: refuses to hold more than `limit`, releases a buffer read to its end,
    /// and compacts one whose read part has grown (so a slow head in many pieces does not grow it without bound).
    /// Throws `ByteToMessageDecoderError.PayloadTooLargeError`, the error NIO's decoders throw for the same.
    mutating func settle(limit: Int) throws {
        if buffer.readableBytes > limit { throw ByteToMessageDecoderError.PayloadTooLargeError() }
        if buffer.readableBytes == 0 {
            buffer = empty
        } else if buffer.readerIndex >= 16 * 1024 {
            buffer.discardReadBytes()
        }
    }

    /// All the bytes not read, or nil when there are none; none are held afterwards.
    package mutating func take() -> ByteBuffer? {
        guard buffer.readableBytes > 0 else { return nil }
        defer { buffer = empty }
        return buffer
    }
}
