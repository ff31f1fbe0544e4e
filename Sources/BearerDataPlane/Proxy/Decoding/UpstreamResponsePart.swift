import NIOCore

/// What ``ResponseDecoder`` delivers for each upstream response: NIOHTTP1's `HTTPClientResponsePart`, with the head
/// and trailers as the bytes they came in (#24 condition 5).
package enum UpstreamResponsePart: Sendable {
    /// A head: a 1xx alone, then the final response's.
    /// Indirect: a part travels in a `NIOAny`, which holds three words inline and boxes anything larger — with the
    /// head inline, every body part and end would cost an allocation (bench/counts.sh: 2 per message).
    indirect case head(UpstreamResponse)
    /// A slice of the body as read (never copied).
    case body(ByteBuffer)
    /// The end, with the chunked body's trailer section as it came: field lines, each ending in CRLF.
    case end(trailers: ByteBuffer?)
}
