import NIOHTTP1

/// Errors thrown by the test helpers (`TestClient`, `TestConnection`, `FakeUpstream`).
enum TestSupportError: Error, CustomStringConvertible {
    /// Nothing happened for `after` (no byte read or written, or the awaited condition not met).
    case timedOut(String, after: Duration)
    /// The connection closed before a response (or the awaited part of it) arrived. `head` is the response head if
    /// one had arrived; `bodyBytes` counts the body bytes that arrived before the close.
    case connectionClosed(head: HTTPResponseHead?, bodyBytes: Int)
    /// A request was started on a `TestConnection` that is still busy with another one.
    case connectionBusy
    /// The helper was shut down while someone was waiting on it.
    case shutDown

    var description: String {
        switch self {
        case .timedOut(let what, let after):
            return "timed out after \(after): \(what)"
        case .connectionClosed(let head, let bodyBytes):
            if let head {
                return "connection closed mid-response (\(head.status.code), \(bodyBytes) body bytes received)"
            }
            return "connection closed before a response arrived"
        case .connectionBusy:
            return "the TestConnection is still busy with another request"
        case .shutDown:
            return "shut down while waiting"
        }
    }
}
