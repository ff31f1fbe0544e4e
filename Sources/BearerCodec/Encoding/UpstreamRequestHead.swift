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
