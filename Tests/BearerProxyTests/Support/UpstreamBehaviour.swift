/// How `FakeUpstream` answers one request; the test's closure picks one per request head.
///
/// Every behaviour except `.rejectEarly`, `.closeImmediately` and `.expectContinue`'s 100 waits for the end of
/// the request body (reading it streaming, hashing it) before answering. After answering, the connection is kept
/// alive unless the request asked for `close` (or was HTTP/1.0 without keep-alive) or the response carries
/// `Connection: close`. A HEAD request never gets body bytes, only the head (with `content-length` where the
/// behaviour knows it).
enum UpstreamBehaviour: Sendable {
    /// 200 `application/json` with an `EchoPayload`: method, raw uri, version, headers in order, body length and
    /// SHA-256 (hashed incrementally, never buffered).
    case echo

    /// A fixed response. `content-length: body.count` is added unless `headers` already has `content-length` or
    /// `transfer-encoding` (then they are sent as given, and if a given `content-length` differs from
    /// `body.count`, the connection is closed after `body` is written: a truncated/overlong response). No framing
    /// header for 1xx/204/304. Headers are sent in the given order.
    case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])

    /// 200 `application/octet-stream` with `bytes` bytes of `TestPattern` (expected hash:
    /// `FakeUpstream.downloadSHA256(bytes:)`), framed by `content-length` or chunked, written in 64 KiB chunks only
    /// while the channel is writable.
    case download(bytes: Int, chunked: Bool)

    /// 200 `text/event-stream` (or `contentType`), chunked; every string from the stream is written and flushed as one
    /// chunk as soon as it arrives; the response ends when the stream finishes. (The stream is consumed by one request
    /// only.)
    case events(AsyncStream<String>, contentType: String = "text/event-stream")

    /// Answers on the request head, without reading the body first: `status` with a small text body,
    /// `connection: close`; after the response is flushed the write side is shut down (FIN) and the rest of the
    /// request body is read and discarded (lingering close, as nginx does) until the request ends, the client
    /// closes, or 2 s pass; then the connection is closed.
    case rejectEarly(status: Int)

    /// If the request has `Expect: 100-continue`, first sends an informational `100 Continue` head; then `.echo`.
    case expectContinue

    /// Reads the whole request and never answers (the connection stays open until the client closes it or the
    /// upstream shuts down).
    case silent

    /// Closes the connection as soon as the request head arrives, without answering.
    case closeImmediately

    /// `.respond` with a UTF-8 text body.
    static func respond(status: Int, headers: [(String, String)] = [], text: String) -> UpstreamBehaviour {
        .respond(status: status, headers: headers, body: Array(text.utf8))
    }
}
