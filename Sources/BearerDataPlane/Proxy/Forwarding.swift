import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// The pure rewrite of a request on its way up and of a response on its way back (SPEC §8).
///
/// Nothing here touches a socket, so every rule is unit-tested on its own.
package enum Forwarding {
    /// How the body of a forwarded message is delimited on the next hop.
    package enum Framing: Equatable {
        case none
        /// A request body of exactly this many bytes.
        case length(Int)
        /// A response body whose `Content-Length` is passed through.
        case contentLength
        case chunked
        /// HTTP/1.0 without `Content-Length`: the body ends when the connection closes (RFC 9112 §6.3 rule 8).
        case untilClose
    }

    /// The request the upstream receives for `client` on `route`.
    ///
    /// - Framing is the proxy's (SPEC §8): the client's `Content-Length` and `Transfer-Encoding` are never copied;
    ///   the proxy writes its own from the message as NIO's parser framed it (``requestFraming(_:)``), so the
    ///   upstream reads exactly the body the proxy forwards — one message, never a second one hidden in a body
    ///   (RFC 9112 §6.3, §11.2). A `Connection` option cannot remove them (`RequestGuard` refuses naming them).
    /// - Hop-by-hop headers and the headers named in `Connection` are dropped (RFC 9110 §7.6.1); a WebSocket
    ///   handshake gets its own `Connection: upgrade` and `Upgrade: websocket` back (``WebSocketUpgrade``).
    /// - Any client `Authorization` is replaced by `authorization` — `Bearer <token>` (SPEC §8; never merged,
    ///   never kept: CVE-2022-29226).
    /// - `Host` becomes the upstream's (RFC 9110 §7.2), first in the header block.
    /// - Client `Forwarded` / `X-Forwarded-*` are dropped (spoofable), and added only if the route asks.
    /// - The path is the upstream's base path plus the raw remainder after the prefix; the query is kept as is.
    ///
    /// Takes the route's binding rather than a `Route`: passing a class's stored struct copies it (a retain of each
    /// of its dozen fields, per request), while reading fields through the reference retains only what is read.
    package static func upstreamRequest(
        client: HTTPRequestHead, binding: RouteBinding, remainder: Substring, query: Substring?, authorization: String?,
        requestID: String, clientAddress: String?, webSocket: Bool = false
    ) -> HTTPRequestHead {
        let upstream = binding.route.upstream
        var uri = upstream.basePath + remainder
        if uri.isEmpty { uri = "/" }
        if let query { uri += "?" + query }

        let options = HeaderPolicy.connectionOptions(in: client.headers)
        var headers = HTTPHeaders()
        headers.reserveCapacity(client.headers.count + 4)
        headers.add(name: "host", value: upstream.hostHeader)
        let removals = binding.removedHeaders
        for (name, value) in client.headers {
            // Hop-by-hop, written by the proxy, or dropped from requests (HeaderPolicy), or named in Connection.
            if HeaderPolicy.isDropped(name, .notForwardedUp, options: options) { continue }
            if !removals.isEmpty, removals.contains(where: { HeaderName.equals(name, lowercased: $0) }) { continue }
            headers.add(name: name, value: value)
        }
        let framing = requestFraming(client.headers)
        switch framing {
        case .chunked:
            headers.add(name: "transfer-encoding", value: "chunked")
        case .length(let length):
            headers.add(name: "content-length", value: String(length))
        case .none where client.method == .POST || client.method == .PUT || client.method == .PATCH:
            // RFC 9110 §8.6: a user agent SHOULD send Content-Length for a method that defines content, and many
            // servers answer 411 without it.
            headers.add(name: "content-length", value: "0")
        case .none, .untilClose, .contentLength:
            break
        }
        for rule in binding.headerRules { rule.apply(to: &headers, client: client, clientAddress: clientAddress) }
        if webSocket { WebSocketUpgrade.addHandshake(to: &headers) }
        if let authorization { headers.add(name: "authorization", value: authorization) }
        headers.add(name: "x-request-id", value: requestID)
        return HTTPRequestHead(version: .http1_1, method: client.method, uri: uri, headers: headers)
    }

    /// How NIO's parser delimited the request body, read from the parsed message alone — never from what a
    /// `Connection` option would leave of it (RFC 9112 §6.3: `Transfer-Encoding` wins, then `Content-Length`, else
    /// no body). `RequestGuard` has already refused every ambiguous combination, and a `Content-Length` that is not
    /// a plain decimal number.
    ///
    /// Looks the two fields up by name: iterating `HTTPHeaders` would copy every name and value out (a retain each).
    package static func requestFraming(_ headers: HTTPHeaders) -> Framing {
        if headers.contains(name: "transfer-encoding") { return .chunked }
        guard let value = headers.first(name: "content-length"), let length = Int(value) else { return .none }
        return .length(length)
    }

    /// Rewrites a `Location` that points into `route`'s upstream (absolute, or path-absolute under its base path)
    /// to the same resource under the route's local prefix; any other value is returned unchanged.
    package static func rewriteLocation(_ location: String, binding: RouteBinding) -> String {
        let upstream = binding.route.upstream
        var pathAndQuery: Substring
        if location.hasPrefix("/") && !location.hasPrefix("//") {
            pathAndQuery = location[...]
        } else {
            let schemePrefix = upstream.scheme.rawValue + "://"
            guard location.count > schemePrefix.count,
                location.prefix(schemePrefix.count).lowercased() == schemePrefix
            else { return location }
            let rest = location.dropFirst(schemePrefix.count)
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            guard isSameAuthority(rest[..<authorityEnd], as: upstream) else { return location }
            pathAndQuery = rest[authorityEnd...]
            if pathAndQuery.isEmpty || !pathAndQuery.hasPrefix("/") { pathAndQuery = "/" + pathAndQuery }
        }
        let pathEnd = pathAndQuery.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? pathAndQuery.endIndex
        let path = pathAndQuery[..<pathEnd]
        let base = upstream.basePath
        guard path == base || path.hasPrefix(base + "/") || base.isEmpty else { return location }
        let prefix = binding.route.prefix
        var local = prefix == "/" ? "" : prefix
        local += path.dropFirst(base.count)
        if local.isEmpty { local = "/" }
        return local + pathAndQuery[pathEnd...]
    }

    private static func isSameAuthority(_ authority: Substring, as upstream: Upstream) -> Bool {
        if authority.contains("@") { return false }
        guard let (host, portText) = Authority.split(authority) else { return false }
        let port = portText.map(Authority.port) ?? (upstream.scheme == .https ? 443 : 80)
        return Authority.unbracketed(host).lowercased() == upstream.host && port == upstream.port
    }
}
