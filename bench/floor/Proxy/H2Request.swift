import NIOCore
import NIOHPACK

/// A stream's request header section written as the HTTP/1.1 head the upstream gets: method and `:path` (the route
/// prefix stripped), the client's fields without `host`, then `Host` and `Authorization` (RFC 9113 §8.3.1).
enum H2Request {
    /// The head, or nil for a section that is not a request the floor forwards.
    static func head(_ headers: HPACKHeaders, rewrite: RequestRewrite, allocator: ByteBufferAllocator) -> ByteBuffer? {
        var method: String?
        var path: String?
        var out = allocator.buffer(capacity: 256)
        var fields = allocator.buffer(capacity: 192)
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case ":scheme", ":authority", "host", "authorization": continue
            default:
                guard name.utf8.first != UInt8(ascii: ":") else { return nil }
                fields.writeString(name)
                fields.writeStaticString(": ")
                fields.writeString(value)
                fields.writeStaticString("\r\n")
            }
        }
        guard let method, var path else { return nil }
        let prefix = String(decoding: rewrite.stripPrefix, as: UTF8.self)
        if !prefix.isEmpty, path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            if rest.isEmpty || rest.first == "/" || rest.first == "?" { path = rest.isEmpty ? "/" : String(rest) }
        }
        out.writeString(method)
        out.writeStaticString(" ")
        out.writeString(path)
        out.writeStaticString(" HTTP/1.1\r\n")
        out.writeBuffer(&fields)
        out.writeBytes(rewrite.addedFields)
        out.writeStaticString("\r\n")
        return out
    }
}
