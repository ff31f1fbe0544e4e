/// What the client side remembers of each request forwarded whose response has not ended yet.
struct PendingResponse {
    /// The client may send another request after this response (RFC 9112 §9.3).
    var keepAlive: Bool
    /// The request was HEAD: the response has no body.
    var isHead: Bool
    /// The client speaks HTTP/1.0: it cannot take a chunked response.
    var isHTTP10: Bool
}
