import NIOCore
import NIOHTTP1

/// The proxy's own heads as bytes — its answers (``LocalResponse``), a forwarded 1xx, a WebSocket `101` — built from
/// NIOHTTP1's types, off the hot path. What NIOHTTP1's encoder checked before writing, this checks too: a field
/// whose name is not a token or whose value holds CR, LF or NUL is left out (RFC 9110 §5.1, §5.5), never written to
/// split the head.
package enum ResponseHeadBytes {
    package static func write(_ head: HTTPResponseHead, into out: inout ByteBuffer) {
        out.writeStaticString(head.version.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        out.writeString(String(head.status.code))
        out.writeStaticString(" ")
        out.writeString(head.status.reasonPhrase)
        out.writeStaticString("\r\n")
        for (name, value) in head.headers where isToken(name) && isFieldValue(value) {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("\r\n")
    }

    package static func bytes(_ head: HTTPResponseHead) -> ByteBuffer {
        var out = ByteBuffer()
        write(head, into: &out)
        return out
    }

    /// `token` (RFC 9110 §5.6.2).
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    /// No byte that would end the line or the head early (RFC 9110 §5.5).
    private static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }
    }
}
