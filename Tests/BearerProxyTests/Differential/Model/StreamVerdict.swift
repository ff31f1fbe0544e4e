/// What one reference parser made of a whole byte stream: the messages it framed in order, how the stream ended,
/// and how many bytes were left after the last message it framed.
struct StreamVerdict: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// How the stream ended for the parser.
    enum End: String, Sendable, Hashable, Decodable {
        /// The input ended between two messages.
        case clean
        /// The input ended inside a message and nothing in it was refused: more bytes could complete it.
        case incomplete
        /// The parser refused the stream at some message.
        case error
        /// A message ended the connection (RFC 9112 §9.6 `close`, or HTTP/1.0 without keep-alive): what follows is
        /// not read.
        case close
        /// A message switched protocols (RFC 9110 §7.8 Upgrade, or CONNECT): what follows is another protocol.
        case upgrade
    }

    var messages: [FramedMessage]
    var end: End
    /// Why the parser refused the stream, in its own words.
    var error: String?
    /// Bytes after the last message framed; nil when the parser cannot say (llhttp consumes the stream whole, so
    /// NIOHTTP1 reports it only after an upgrade, where it hands back the bytes it did not parse).
    var leftover: Int?

    var description: String {
        "\(messages.count) message(s), \(end.rawValue)" + (error.map { " (\($0))" } ?? "")
            + (leftover.map { ", \($0) byte(s) left" } ?? "")
    }
}
