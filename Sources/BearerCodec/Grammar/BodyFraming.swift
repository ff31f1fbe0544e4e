/// How a message's body is delimited (RFC 9112 §6.3), as the parser decided it.
package enum BodyFraming: Sendable, Equatable {
    /// No body: a request with neither Content-Length nor Transfer-Encoding, a response to HEAD, 1xx, 204, 304.
    case none
    /// Exactly this many bytes (Content-Length).
    case length(Int)
    /// Transfer-Encoding: chunked, passed through as it is; ``ChunkedBody`` finds the end.
    case chunked
    /// A response with neither: the body ends when the upstream closes (RFC 9112 §6.3 rule 8).
    case untilClose
}
