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

    /// The response the client receives for `upstream`'s answer to `request`.
    ///
    /// Status and end-to-end headers pass through unchanged; hop-by-hop ones are dropped; a `Location` that points
    /// into the route's upstream is rewritten to the local prefix (so following it stays on the proxy); framing is
    /// re-derived for the client's HTTP version (``responseFraming(upstream:request:)``); `X-Request-Id` is the
    /// proxy's.
    package static func clientResponse(
        upstream: HTTPResponseHead, request: HTTPRequestHead, binding: RouteBinding, requestID: String, keepAlive: Bool
    ) -> (head: HTTPResponseHead, framing: Framing) {
        let options = HeaderPolicy.connectionOptions(in: upstream.headers)
        var headers = HTTPHeaders()
        headers.reserveCapacity(upstream.headers.count + 2)
        var upstreamChunked = false
        for (name, value) in upstream.headers {
            if HeaderPolicy.isDropped(name, .notForwardedDown, options: options) {
                if HeaderName.equals(name, "transfer-encoding") { upstreamChunked = true }
                continue
            }
            if HeaderName.equals(name, "location") {
                headers.add(name: name, value: rewriteLocation(value, binding: binding))
                continue
            }
            headers.add(name: name, value: value)
        }
        if upstreamChunked { headers.remove(name: "content-length") }
        headers.add(name: "x-request-id", value: requestID)

        // Read from the head as built: it holds a `Content-Length` exactly when ``responseFraming(upstream:request:)``
        // says one is forwarded (ForwardingTests checks that the two agree), and this costs one scan of our own
        // header list instead of two of the upstream's.
        let framing = framing(
            status: upstream.status, request: request, forwardsLength: headers.contains(name: "content-length"))
        switch framing {
        case .none:
            // RFC 9110 §9.3.2, §15.3.5, §15.4.5: no content; Content-Length (if any) describes the would-be body.
            if upstream.status == .noContent { headers.remove(name: "content-length") }
        case .chunked:
            headers.add(name: "transfer-encoding", value: "chunked")
        case .contentLength, .length, .untilClose:
            break
        }
        let staysOpen = keepAlive && framing != .untilClose
        if !staysOpen {
            headers.add(name: "connection", value: "close")
        } else if request.version.minor == 0 {
            headers.add(name: "connection", value: "keep-alive")
        }
        return (HTTPResponseHead(version: request.version, status: upstream.status, headers: headers), framing)
    }

    /// The upstream's trailer fields as the client gets them: without the fields that may never be trailers (RFC
    /// 9110 §6.5.1: framing, routing and connection management — Content-Length, Transfer-Encoding, Host and the
    /// hop-by-hop fields), which a recipient would read as a second header section. h11 refuses a response whose
    /// trailers name Transfer-Encoding, which the proxy relayed as sent (the long differential run of session 13,
    /// seed 41). Nil or unchanged, without a copy, when there is nothing to drop.
    package static func clientTrailers(_ trailers: HTTPHeaders?) -> HTTPHeaders? {
        guard let trailers, trailers.contains(where: { isNeverATrailer($0.name) }) else { return trailers }
        var kept = HTTPHeaders()
        for (name, value) in trailers where !isNeverATrailer(name) { kept.add(name: name, value: value) }
        return kept
    }

    private static func isNeverATrailer(_ name: String) -> Bool {
        HeaderName.equals(name, "content-length") || HeaderName.equals(name, "host")
            || HeaderPolicy.rules(of: name).contains(.hopByHop)
    }

    /// How the response to `request` is delimited for the client: decided from the upstream's head alone, so the
    /// exchange's machine knows before the head is rewritten whether the client's connection must close after it
    /// (``Framing/untilClose``). The rewrite (``clientResponse(upstream:request:binding:requestID:keepAlive:)``)
    /// reaches the same answer from the head it builds: a `Content-Length` is forwarded exactly when this says
    /// ``Framing/contentLength`` (ForwardingTests checks the two agree).
    package static func responseFraming(upstream: HTTPResponseHead, request: HTTPRequestHead) -> Framing {
        let headers = upstream.headers
        // A `Transfer-Encoding` makes any `Content-Length` meaningless (RFC 9112 §6.3 rule 3), and a length the
        // upstream's `Connection` names is dropped with it (RFC 9110 §7.6.1).
        let forwardsLength =
            headers.contains(name: "content-length") && !headers.contains(name: "transfer-encoding")
            && !HeaderPolicy.isDropped(
                "content-length", .notForwardedDown, options: HeaderPolicy.connectionOptions(in: headers))
        return framing(status: upstream.status, request: request, forwardsLength: forwardsLength)
    }

    /// The framing of a response with `status` to `request`, `forwardsLength` when its head, as forwarded, carries
    /// a `Content-Length`.
    private static func framing(status: HTTPResponseStatus, request: HTTPRequestHead, forwardsLength: Bool) -> Framing {
        let code = status.code
        // RFC 9110 §9.3.2, §15.3.5, §15.4.5: no content.
        if request.method == .HEAD || code / 100 == 1 || code == 204 || code == 304 { return .none }
        if forwardsLength { return .contentLength }
        return request.version.minor >= 1 ? .chunked : .untilClose
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
