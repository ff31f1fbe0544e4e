import NIOHTTP1

/// Hop-by-hop headers: they describe one connection, not the message, so a proxy must not forward them.
enum HopByHop {
    /// RFC 9110 §7.6.1 (Connection), RFC 9112 §6.1 (Transfer-Encoding), §7.4 (TE), §9.6 (Keep-Alive via RFC 2068
    /// §19.7.1), RFC 9110 §11.7.1–2 (Proxy-Authenticate, Proxy-Authorization), §7.8 (Upgrade), §6.6.2 (Trailer),
    /// plus the non-standard `Proxy-Connection` — the same list as Go's `httputil.ReverseProxy` "as of RFC 7230".
    static let names: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// Whether `name` is one of ``names``, in any case, without allocating.
    static func isListed(_ name: String) -> Bool {
        isListed(bytes: name.utf8)
    }

    static func isListed<Bytes: Collection<UInt8>>(bytes name: Bytes) -> Bool {
        switch name.count {
        case 2: HeaderName.equals(bytes: name, "te")
        case 7: HeaderName.equals(bytes: name, "trailer") || HeaderName.equals(bytes: name, "upgrade")
        case 10: HeaderName.equals(bytes: name, "connection") || HeaderName.equals(bytes: name, "keep-alive")
        case 16: HeaderName.equals(bytes: name, "proxy-connection")
        case 17: HeaderName.equals(bytes: name, "transfer-encoding")
        case 18: HeaderName.equals(bytes: name, "proxy-authenticate")
        case 19: HeaderName.equals(bytes: name, "proxy-authorization")
        default: false
        }
    }

    /// The header names listed in `Connection` (RFC 9110 §7.6.1: "the connection options"), lowercased, which are
    /// hop-by-hop too and must be removed along with `Connection` itself. Options already in ``names`` are left
    /// out, so the usual `Connection: keep-alive` gives an empty list (and no allocation), as does no `Connection`.
    static func connectionOptions(in headers: HTTPHeaders) -> [String] {
        var options: [String] = []
        // Looked up by name rather than by iterating: iterating `HTTPHeaders` copies every name and value out (a
        // retain each), and this runs twice per proxied request. The lookup is ASCII case-insensitive, like ours.
        for value in headers["connection"] {
            forEachOption(in: value) { option in
                if !isListed(bytes: option) {
                    options.append(String(decoding: option, as: UTF8.self).lowercased())
                }
            }
        }
        return options
    }

    /// Calls `body` with each non-empty element of a `Connection` value (RFC 9110 §7.6.1), trimmed, as bytes.
    /// Byte by byte, not with split/trim: this runs for nearly every response.
    static func forEachOption(in value: String, _ body: (Substring.UTF8View.SubSequence) -> Void) {
        let bytes = value[...].utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            var low = start
            var high = end
            while low < high, isWhitespace(bytes[low]) { low = bytes.index(after: low) }
            while low < high, isWhitespace(bytes[bytes.index(before: high)]) { high = bytes.index(before: high) }
            if low < high { body(bytes[low..<high]) }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
    }

    /// Optional whitespace around list elements (RFC 9110 §5.6.1, §5.6.3): spaces and tabs.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// Whether `name` (any case) must not cross the proxy, given the message's connection options.
    static func isHopByHop(_ name: String, options: [String]) -> Bool {
        isListed(name) || options.contains { HeaderName.equals(name, lowercased: $0) }
    }
}
