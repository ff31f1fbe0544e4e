/// A request body for `TestClient` / `TestConnection`.
enum TestBody: Sendable {
    /// No body and no framing header added (an HTTP/1.1 request without body). Add `("content-length", "0")`
    /// yourself to send an explicit empty body.
    case none
    /// These bytes; `content-length` is added unless the headers already have `content-length` or
    /// `transfer-encoding` (with `transfer-encoding: chunked` they are sent as one chunk).
    case bytes([UInt8])
    /// `length` bytes of `TestPattern`, generated 64 KiB at a time and written only while the channel is writable
    /// (never materialised); framed `transfer-encoding: chunked` or `content-length: length` (unless the headers
    /// already frame it). Expected hash: `TestBody.streamSHA256(length:)`.
    case stream(length: Int, chunked: Bool)

    /// A UTF-8 text body.
    static func text(_ text: String) -> TestBody {
        .bytes(Array(text.utf8))
    }

    /// The SHA-256 (lower-case hex) of a `.stream(length:chunked:)` body of that length.
    static func streamSHA256(length: Int) -> String {
        TestPattern.sha256(length: length)
    }

    /// The body's length in bytes (0 for `.none`).
    var length: Int {
        switch self {
        case .none: return 0
        case .bytes(let bytes): return bytes.count
        case .stream(let length, _): return length
        }
    }

    /// The body's SHA-256 (lower-case hex).
    var sha256: String {
        switch self {
        case .none: return TestPattern.sha256(length: 0)
        case .bytes(let bytes): return TestPattern.sha256(of: bytes)
        case .stream(let length, _): return TestPattern.sha256(length: length)
        }
    }

    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}
