import NIOHTTP1

/// Hop-by-hop headers: they describe one connection, not the message, so a proxy must not forward them.
enum HopByHop {
    /// RFC 9110 §7.6.1 (Connection), RFC 9112 §6.1 (Transfer-Encoding), §7.4 (TE), §9.6 (Keep-Alive via RFC 2068
    /// §19.7.1), RFC 9110 §11.7.1–2 (Proxy-Authenticate, Proxy-Authorization), §7.8 (Upgrade), §6.6.2 (Trailer),
    /// plus the non-standard `Proxy-Connection` — the same list as Go's `httputil.ReverseProxy` "as of RFC 7230".
    /// Lowercased, because header names are case-insensitive (RFC 9110 §5.1).
    static let names: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// The lowercased header names listed in `Connection` (RFC 9110 §7.6.1: "the connection options"), which are
    /// hop-by-hop too and must be removed along with `Connection` itself.
    static func connectionOptions(in headers: HTTPHeaders) -> Set<String> {
        var options: Set<String> = []
        for value in headers[canonicalForm: "connection"] {
            options.insert(value.lowercased())
        }
        return options
    }

    /// Whether `name` (any case) must not cross the proxy, given the request's or response's connection options.
    static func isHopByHop(_ name: String, options: Set<String>) -> Bool {
        let lowered = name.lowercased()
        return names.contains(lowered) || options.contains(lowered)
    }
}
