import NIOCore
import NIOHTTP1

/// Gathers one HTTP request's parts (head, body up to a limit) for the fake identity servers' handlers.
struct RequestCollector {
    /// A whole request.
    struct Request {
        var head: HTTPRequestHead
        var body: [UInt8]
        /// The body went past the limit (and was not kept): answer 413.
        var bodyTooLarge: Bool
    }

    /// The largest request body kept (a token request is a few KiB).
    static let maximumBodySize = 1 << 20

    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    /// Takes one part; returns the request once its end has arrived.
    mutating func collect(_ part: HTTPServerRequestPart) -> Request? {
        switch part {
        case .head(let head):
            self.head = head
            self.body = []
            self.bodyTooLarge = false
        case .body(let buffer):
            if self.body.count + buffer.readableBytes > Self.maximumBodySize {
                self.bodyTooLarge = true
            } else {
                self.body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let head = self.head else { return nil }
            self.head = nil
            defer { self.body = [] }
            return Request(head: head, body: self.body, bodyTooLarge: self.bodyTooLarge)
        }
        return nil
    }
}
