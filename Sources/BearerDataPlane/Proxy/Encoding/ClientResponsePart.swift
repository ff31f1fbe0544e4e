import NIOCore

/// What the proxy writes to its client for one response, heads already as bytes (#24 condition 5): the upstream's
/// rewritten in one pass (``Forwarding``), or the proxy's own (``ResponseHeadBytes``).
package enum ClientResponsePart: Sendable {
    /// A complete head, its empty line included; `chunked` when the body that follows goes as chunks (RFC 9112 §7.1).
    case head(ByteBuffer, chunked: Bool)
    case body(ByteBuffer)
    /// The end; for a chunked body, the trailer section to send with the last chunk (field lines, each ending in
    /// CRLF).
    case end(trailers: ByteBuffer?)
}
