import NIOCore

/// What ``ResponseDecoder`` delivers for each upstream response: NIOHTTP1's `HTTPClientResponsePart`, with the head
/// and trailers as the bytes they came in.
package enum UpstreamResponsePart: Sendable {
    /// A head: a 1xx alone, then the final response's.
    /// Not indirect: parts do not cross the pipeline in a `NIOAny` (which boxes anything over three words); they are
    /// returned by value to the handler that runs the decoder, and a box would cost an allocation per message
    /// (bench/counts.sh).
    case head(UpstreamResponse)
    /// A slice of the body as read (never copied).
    case body(ByteBuffer)
    /// The end, with the chunked body's trailer section as it came: field lines, each ending in CRLF.
    case end(trailers: ByteBuffer?)
}
