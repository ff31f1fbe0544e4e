import NIOCore

/// A part of a message the proxy writes, heads already as bytes: the response to a client — the upstream's rewritten in
/// one pass (``Forwarding``) or the proxy's own (``ResponseHeadBytes``) — or a request to an upstream
/// (``UpstreamHandler``).
package enum MessagePart: Sendable {
    /// A complete head, its empty line included; `chunked` when the body that follows goes as chunks (RFC 9112 §7.1).
    case head(ByteBuffer, chunked: Bool)
    case body(ByteBuffer)
    /// The end; for a chunked body, the trailer section to send with the last chunk (field lines, each ending in
    /// CRLF).
    case end(trailers: ByteBuffer?)
}

/// A part that says how it is written as a ``MessagePart``.
protocol MessagePartConvertible: Sendable {
    var messagePart: MessagePart { get }
}

extension MessagePart: MessagePartConvertible {
    var messagePart: MessagePart { self }
}
