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
    static func translate(_ headers: HPACKHeaders, endStream: Bool) throws(Malformed) -> HTTP2RequestHead {
        var method: String?
        var scheme: String?
        var path: String?
        var authority: String?
        var host: String?
        var cookies: [String] = []
        var fields: [(String, String)] = []
        fields.reserveCapacity(headers.count)
        var contentLength = false
        for (name, value, _) in headers {
            guard Self.isFieldValue(value) else {
                throw Malformed(reason: "a field value holds CR, LF, NUL or edge spaces")
            }
            if name.utf8.first == UInt8(ascii: ":") {
                guard fields.isEmpty, cookies.isEmpty, host == nil else {
                    throw Malformed(reason: "a pseudo-header follows a field")
                }
                switch name {
                case ":method": method = try Self.once(method, value, name)
                case ":scheme": scheme = try Self.once(scheme, value, name)
                case ":path": path = try Self.once(path, value, name)
                case ":authority": authority = try Self.once(authority, value, name)
                default: throw Malformed(reason: "pseudo-header \(name) is not a request's")
                }
                continue
            }
            guard Self.isFieldName(name) else { throw Malformed(reason: "a field name is not a lowercase token") }
            if Self.connectionSpecific.contains(name) {
                throw Malformed(reason: "connection-specific field \(name)")
            }
            switch name {
            case "te":
                guard value == "trailers" else { throw Malformed(reason: "te other than trailers") }
                fields.append((name, value))
            case "host": host = try Self.once(host, value, name)
            case "cookie": cookies.append(value)
            case "content-length":
                // A stream that ended with its head has no body to be that long (RFC 9113 §8.1.1).
                guard !endStream || value == "0" else {
                    throw Malformed(reason: "content-length on a stream without DATA")
                }
                contentLength = true
                fields.append((name, value))
            default: fields.append((name, value))
            }
        }
        guard let method, URICharacters.isToken(method) else {
            throw Malformed(reason: "no :method, or one that is not a token")
        }
        guard method != "CONNECT" else {
            // Extended CONNECT (RFC 8441) is not offered (SETTINGS_ENABLE_CONNECT_PROTOCOL is never sent), and plain
            // CONNECT has no :path; the HTTP/1.1 side refuses CONNECT with its own problem.
            return try connect(authority: authority, fields: fields)
        }
        guard let scheme, scheme == "http" || scheme == "https" else {
            throw Malformed(reason: "no :scheme, or one other than http and https")
        }
        guard let path, !path.isEmpty, Self.isTarget(path) else {
            throw Malformed(reason: "no :path, or a malformed one")
        }
        // RFC 9113 §8.3.1: a path and query beginning with "/", or "*" for OPTIONS; never the absolute form, whose
        // authority would stand beside :authority.
        guard path.utf8.first == UInt8(ascii: "/") || (path == "*" && method == "OPTIONS") else {
            throw Malformed(reason: ":path neither begins with / nor is * for OPTIONS")
        }
        // RFC 9113 §8.3.1: `Host` and `:authority` must name the same authority when both are sent.
        if let authority, let host, authority.lowercased() != host.lowercased() {
            throw Malformed(reason: "host differs from :authority")
        }
        if let authority, !Self.isTarget(authority) { throw Malformed(reason: "a malformed :authority") }
        let body: Body = endStream ? .none : (contentLength ? .length : .chunked)

        var bytes = ByteBuffer()
        bytes.reserveCapacity(64 + headers.count * 32)
        bytes.writeString(method)
        bytes.writeString(" ")
        bytes.writeString(path)
        bytes.writeString(" HTTP/1.1\r\n")
        if let hostValue = authority ?? host { Self.write("host", hostValue, into: &bytes) }
        // RFC 9113 §8.2.3: cookie crumbs are joined with "; " for an HTTP/1.1 hop.
        if !cookies.isEmpty { Self.write("cookie", cookies.joined(separator: "; "), into: &bytes) }
        for (name, value) in fields { Self.write(name, value, into: &bytes) }
        if body == .chunked { Self.write("transfer-encoding", "chunked", into: &bytes) }
        bytes.writeString("\r\n")
        return HTTP2RequestHead(bytes: bytes, body: body, isHead: method == "HEAD")
    }

    /// A `CONNECT` written as such: the client connection refuses it as it refuses an HTTP/1.1 one.
    private static func connect(authority: String?, fields: [(String, String)]) throws(Malformed) -> HTTP2RequestHead {
        guard let authority, Self.isTarget(authority) else { throw Malformed(reason: "CONNECT without :authority") }
        var bytes = ByteBuffer()
        bytes.writeString("CONNECT \(authority) HTTP/1.1\r\n")
        write("host", authority, into: &bytes)
        bytes.writeString("\r\n")
        return HTTP2RequestHead(bytes: bytes, body: .none, isHead: false)
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
