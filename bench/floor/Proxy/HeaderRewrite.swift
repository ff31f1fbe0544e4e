import NIOHTTP1

/// The floor's head rewrite, in `HTTPHeaders` as the product does it: hop-by-hop fields out (RFC 9110 §7.6.1),
/// the route prefix stripped, Host and Authorization set, framing explicit.
enum HeaderRewrite {
    /// RFC 9110 §7.6.1 and the product's `HopByHop.names`.
    static let hopByHop = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]

    static func request(_ head: inout HTTPRequestHead, configuration: ProxyConfiguration) {
        let chunked = head.headers.contains(name: "transfer-encoding")
        removeHopByHop(&head.headers)
        head.headers.remove(name: "host")
        head.headers.remove(name: "authorization")
        head.headers.add(name: "host", value: configuration.upstream.authority)
        head.headers.add(name: "authorization", value: configuration.authorization)
        // NIO's decoder took the chunks apart; the encoder puts them back together when the head says so.
        if chunked { head.headers.add(name: "transfer-encoding", value: "chunked") }
        let prefix = configuration.stripPrefix
        if !prefix.isEmpty, head.uri.hasPrefix(prefix) {
            let rest = head.uri.dropFirst(prefix.count)
            if rest.isEmpty || rest.first == "/" || rest.first == "?" {
                head.uri = rest.first == "/" ? String(rest) : "/" + rest
            }
        }
    }

    static func response(_ head: inout HTTPResponseHead) {
        let chunked = head.headers.contains(name: "transfer-encoding")
        removeHopByHop(&head.headers)
        if chunked { head.headers.add(name: "transfer-encoding", value: "chunked") }
    }

    /// Removes the hop-by-hop fields and those the message's Connection fields name.
    static func removeHopByHop(_ headers: inout HTTPHeaders) {
        for value in headers["connection"] {
            for option in value.split(separator: ",") {
                let name = option.trimmingSpacesAndTabs()
                if !name.isEmpty { headers.remove(name: String(name)) }
            }
        }
        for name in hopByHop { headers.remove(name: name) }
    }
}

extension Substring {
    func trimmingSpacesAndTabs() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
