import BearerConfiguration
import NIOCore
import NIOHPACK

/// An HTTP/2 request's header section written as the HTTP/1.1 head that the client connection's strict decoder then
/// reads (RFC 9113 §8.3.1 to RFC 9112 §3), so that every rule the proxy holds for a request — routes, methods, path
/// normalisation, header policy, limits, the client key — is checked in one place for both protocols.
///
/// Writing bytes that a parser reads again is only safe when no field can change how they are read: a CR, LF or NUL
/// in a value, a space in the method or path, or a colon in a name would let a client smuggle a field line or a
/// second request past the HTTP/2 framing. NIOHTTP2 already refuses most of these; every one is checked here as well,
/// before a byte is written (RFC 9113 §8.2.1, "malformed").
struct HTTP2RequestHead: Equatable {
    /// How the body that follows is framed on the HTTP/1.1 side.
    enum Body: Equatable {
        /// The stream ended with its header section.
        case none
        /// The client gave `content-length`; NIOHTTP2 checks it against the DATA received (RFC 9113 §8.1.1).
        case length
        /// No length was given: the DATA frames go as chunks.
        case chunked
    }

    /// Why a header section cannot be a request (RFC 9113 §8.1.1): the stream is reset with `PROTOCOL_ERROR`.
    struct Malformed: Error, Equatable {
        var reason: String
    }

    var bytes: ByteBuffer
    var body: Body
    /// A `HEAD` request: its response has no body (RFC 9110 §9.3.2).
    var isHead: Bool

    /// Fields that mean something only to one HTTP/1.1 connection (RFC 9113 §8.2.2): refused in a request (NIOHTTP2
    /// refuses them too), dropped from a response (``HTTP2ResponseFields``).
    static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
    ]

    /// The head of `headers`, a request's first header section; `endStream` when no DATA follows.
    ///
    /// One pass, writing as it reads: the pseudo-headers come first (RFC 9113 §8.3, checked), so the request line and
    /// `host` are written at the first field, and each field after them as it comes; only cookie crumbs wait, to be
    /// joined at the end. The order of fields with different names carries no meaning (RFC 9110 §5.3).
    static func translate(_ headers: HPACKHeaders, endStream: Bool) throws(Malformed) -> HTTP2RequestHead {
        var line = RequestLine()
        var fieldsBegun = false
        var host: String?
        var cookies: [String] = []
        var contentLength = false
        var bytes = ByteBufferAllocator().buffer(capacity: 64 + headers.count * 40)
        for (name, value, _) in headers {
            guard Self.isFieldValue(value) else {
                throw Malformed(reason: "a field value holds CR, LF, NUL or edge spaces")
            }
            if name.utf8.first == UInt8(ascii: ":") {
                guard !fieldsBegun else { throw Malformed(reason: "a pseudo-header follows a field") }
                try line.take(name, value)
                continue
            }
            if !fieldsBegun {
                fieldsBegun = true
                try line.write(into: &bytes)
            }
            guard Self.isFieldName(name) else { throw Malformed(reason: "a field name is not a lowercase token") }
            if Self.connectionSpecific.contains(name) {
                throw Malformed(reason: "connection-specific field \(name)")
            }
            switch name {
            case "te":
                guard value == "trailers" else { throw Malformed(reason: "te other than trailers") }
            case "host":
                host = try Self.once(host, value, name)
                // RFC 9113 §8.3.1: `Host` and `:authority` must name the same authority when both are sent; the
                // line written for :authority stands for both.
                if let authority = line.authority {
                    guard authority.lowercased() == value.lowercased() else {
                        throw Malformed(reason: "host differs from :authority")
                    }
                    continue
                }
            case "cookie":
                cookies.append(value)
                continue
            case "content-length":
                // A stream that ended with its head has no body to be that long (RFC 9113 §8.1.1).
                guard !endStream || value == "0" else {
                    throw Malformed(reason: "content-length on a stream without DATA")
                }
                contentLength = true
            default:
                break
            }
            // CONNECT's head is its line and host alone; its fields were checked all the same.
            if !line.isConnect { Self.write(name, value, into: &bytes) }
        }
        if !fieldsBegun { try line.write(into: &bytes) }
        guard !line.isConnect else {
            bytes.writeString("\r\n")
            return HTTP2RequestHead(bytes: bytes, body: .none, isHead: false)
        }
        // RFC 9113 §8.2.3: cookie crumbs are joined with "; " for an HTTP/1.1 hop.
        if !cookies.isEmpty { Self.write("cookie", cookies.joined(separator: "; "), into: &bytes) }
        let body: Body = endStream ? .none : (contentLength ? .length : .chunked)
        if body == .chunked { Self.write("transfer-encoding", "chunked", into: &bytes) }
        bytes.writeString("\r\n")
        return HTTP2RequestHead(bytes: bytes, body: body, isHead: line.method == "HEAD")
    }

    /// The pseudo-headers of a request, checked and written as its request line and `host` field.
    private struct RequestLine {
        var method: String?
        var scheme: String?
        var path: String?
        var authority: String?

        var isConnect: Bool { method == "CONNECT" }

        mutating func take(_ name: String, _ value: String) throws(Malformed) {
            switch name {
            case ":method": method = try HTTP2RequestHead.once(method, value, name)
            case ":scheme": scheme = try HTTP2RequestHead.once(scheme, value, name)
            case ":path": path = try HTTP2RequestHead.once(path, value, name)
            case ":authority": authority = try HTTP2RequestHead.once(authority, value, name)
            default: throw Malformed(reason: "pseudo-header \(name) is not a request's")
            }
        }

        func write(into bytes: inout ByteBuffer) throws(Malformed) {
            guard let method, URICharacters.isToken(method) else {
                throw Malformed(reason: "no :method, or one that is not a token")
            }
            if let authority, !HTTP2RequestHead.isTarget(authority) {
                throw Malformed(reason: "a malformed :authority")
            }
            guard method != "CONNECT" else {
                // Extended CONNECT (RFC 8441) is not offered (SETTINGS_ENABLE_CONNECT_PROTOCOL is never sent), and
                // plain CONNECT has no :path; the HTTP/1.1 side refuses CONNECT with its own problem.
                guard let authority else { throw Malformed(reason: "CONNECT without :authority") }
                bytes.writeString("CONNECT ")
                bytes.writeString(authority)
                bytes.writeString(" HTTP/1.1\r\n")
                HTTP2RequestHead.write("host", authority, into: &bytes)
                return
            }
            guard let scheme, scheme == "http" || scheme == "https" else {
                throw Malformed(reason: "no :scheme, or one other than http and https")
            }
            guard let path, !path.isEmpty, HTTP2RequestHead.isTarget(path) else {
                throw Malformed(reason: "no :path, or a malformed one")
            }
            // RFC 9113 §8.3.1: a path and query beginning with "/", or "*" for OPTIONS; never the absolute form, whose
            // authority would stand beside :authority.
            guard path.utf8.first == UInt8(ascii: "/") || (path == "*" && method == "OPTIONS") else {
                throw Malformed(reason: ":path neither begins with / nor is * for OPTIONS")
            }
            bytes.writeString(method)
            bytes.writeString(" ")
            bytes.writeString(path)
            bytes.writeString(" HTTP/1.1\r\n")
            if let authority { HTTP2RequestHead.write("host", authority, into: &bytes) }
        }
    }

    private static func once(_ seen: String?, _ value: String, _ name: String) throws(Malformed) -> String {
        guard seen == nil else { throw Malformed(reason: "\(name) given twice") }
        return value
    }

    private static func write(_ name: String, _ value: String, into bytes: inout ByteBuffer) {
        bytes.writeString(name)
        bytes.writeString(": ")
        bytes.writeString(value)
        bytes.writeString("\r\n")
    }

    // MARK: Characters

    /// A field name as HTTP/2 carries it: a token without uppercase letters (RFC 9113 §8.2.1).
    static func isFieldName(_ name: String) -> Bool {
        URICharacters.isToken(name) && !name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    /// No CR, LF or NUL anywhere, and no space or tab at either end (RFC 9113 §8.2.1).
    static func isFieldValue(_ value: String) -> Bool {
        let utf8 = value.utf8
        if utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) { return false }
        guard let first = utf8.first, let last = utf8.last else { return true }
        return first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09
    }

    /// A request target or authority: visible ASCII only, so it cannot end the request line early.
    static func isTarget(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
