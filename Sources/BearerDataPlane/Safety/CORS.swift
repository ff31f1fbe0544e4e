import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// Cross-origin resource sharing for the browser origins listed in `allowedOrigins` (Fetch Standard §3.2).
///
/// The proxy answers for its upstreams: preflights never reach an upstream (so never carry a token), and
/// responses name the calling origin exactly — never `*` — without `Access-Control-Allow-Credentials`, so a
/// browser does not attach cookies or client certificates.
enum CORS {
    /// How long a browser may cache a preflight answer.
    static let maxAgeSeconds = 600

    /// Replaces any CORS headers in `headers` (the proxy's own answer) with the proxy's for `origin`.
    static func apply(origin: String, to headers: inout HTTPHeaders) {
        for name in [
            "access-control-allow-origin", "access-control-allow-credentials", "access-control-expose-headers",
        ] {
            headers.remove(name: name)
        }
        for (name, value) in fields(origin: origin) { headers.add(name: name, value: value) }
    }

    /// The proxy's CORS fields for `origin`, in the order ``write(origin:into:)`` writes them.
    static func fields(origin: String) -> [(name: String, value: String)] {
        [
            ("access-control-allow-origin", origin), ("access-control-expose-headers", "x-request-id"),
            ("vary", "Origin"),
        ]
    }

    /// Whether the field at `bytes[name]` of an upstream's response is one the proxy writes itself for a browser's
    /// request (``write(origin:into:)``): it is dropped.
    static func isReplaced(_ bytes: Span<UInt8>, _ name: Range<Int>) -> Bool {
        guard FieldName.hasPrefix(bytes, name, "access-control-") else { return false }
        return FieldName.equals(bytes, name, "access-control-allow-origin")
            || FieldName.equals(bytes, name, "access-control-allow-credentials")
            || FieldName.equals(bytes, name, "access-control-expose-headers")
    }

    /// Writes the proxy's CORS fields for `origin` into a forwarded response's head.
    package static func write(origin: String, into out: inout HeadBytes) {
        out.append("access-control-allow-origin: ")
        out.append(contentsOf: origin)
        out.append("\r\naccess-control-expose-headers: x-request-id\r\nvary: Origin\r\n")
    }

    /// The answer to a preflight from an allowed `origin`.
    static func preflight(origin: String, method: String, headers requested: String?) -> LocalResponse {
        var response = LocalResponse(status: .noContent, contentType: "text/plain", body: ByteBuffer())
        response.headers.remove(name: "content-type")
        response.headers.remove(name: "content-length")
        response.headers.add(name: "access-control-allow-origin", value: origin)
        response.headers.add(name: "access-control-allow-methods", value: method)
        if let requested { response.headers.add(name: "access-control-allow-headers", value: requested) }
        response.headers.add(name: "access-control-max-age", value: String(maxAgeSeconds))
        response.headers.add(
            name: "vary", value: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
        return response
    }
}
