import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// The pure rewrite of a request on its way up and of a response on its way back (SPEC §8).
///
/// Nothing here touches a socket, so every rule is unit-tested on its own.
enum Forwarding {
    /// How the body of a forwarded message is delimited on the next hop.
    enum Framing: Equatable {
        case none
        /// A request body of exactly this many bytes.
        case length(Int)
        /// A response body whose `Content-Length` is passed through.
        case contentLength
        case chunked
        /// HTTP/1.0 without `Content-Length`: the body ends when the connection closes (RFC 9112 §6.3 rule 8).
        case untilClose
    }

    /// The request the upstream receives for `client` on `route`, written as bytes in one pass over the client's
    /// field lines: runs of kept lines copied as they came.
    ///
    /// - Framing is the proxy's (SPEC §8): the client's `Content-Length` and `Transfer-Encoding` are never copied;
    ///   the proxy writes its own from the message as the codec framed it, so the upstream reads exactly the body
    ///   the proxy forwards — one message, never a second one hidden in a body (RFC 9112 §6.3, §11.2). A
    ///   `Connection` option cannot remove them (the codec refuses naming them).
    /// - Hop-by-hop headers and the headers named in `Connection` are dropped (RFC 9110 §7.6.1); a WebSocket
    ///   handshake gets its own `Connection: upgrade` and `Upgrade: websocket` back (``WebSocketUpgrade``).
    /// - Any client `Authorization` is replaced by `authorization` — `Bearer <token>` (SPEC §8; never merged,
    ///   never kept: CVE-2022-29226), or `DPoP <token>` with `proof` as the `DPoP` field (RFC 9449 §7.1). A client's
    ///   own `DPoP` is never copied, whatever the route: it would pair the proxy's token with the client's proof.
    /// - `Host` becomes the upstream's (RFC 9110 §7.2), first in the header block.
    /// - Client `Forwarded` / `X-Forwarded-*` are dropped (spoofable), and added only if the route asks.
    /// - The route's `headers.remove` and `headers.set` names are dropped as they are copied; `set` values follow.
    /// - The path is the upstream's base path plus the raw remainder after the prefix; the query is kept as is.
    /// - The version is HTTP/1.1 whatever the client's (the proxy is the upstream's client, RFC 9110 §6.2).
    ///
    /// The head is written into `out`, emptied first: the connection's ``ReusedHeadBuffer``.
    static func upstreamHead(
        client: ClientRequest, binding: RouteBinding, remainder: Substring, query: Substring?, authorization: String?,
        proof: [UInt8]? = nil, requestID: String, clientAddress: String?, webSocket: Bool = false,
        into out: inout ByteBuffer
    ) -> UpstreamRequestHead {
        let parsed = client.parsed
        let bytes = client.bytes.readableBytesUInt8Span
        // The route's parts are read through `binding` where they are used: a local copy of its `Upstream`, or of
        // its lists, costs a retain and a release of each of their strings on every request (bench/counts.sh).
        let basePath = binding.route.upstream.basePath.utf8
        // What the head can take: the client's head (method, target and kept fields are parts of it; the path and
        // query come from its target), the route's path and Host, the token and the id, and the proxy's own lines.
        // Written in one piece (``HeadBytes``); a route's own rules may need more, which costs a second pass.
        let bound =
            client.bytes.readableBytes + basePath.count + binding.route.upstream.hostHeader.utf8.count
            + (authorization?.utf8.count ?? 0) + (proof?.count ?? 0) + requestID.utf8.count + 200
        out.clear()
        out.writeHead(bound: bound) { out in
            out.append(bytes.extracting(parsed.method))
            out.append(" ")
            if basePath.isEmpty && remainder.isEmpty {
                out.append("/")
            } else {
                out.append(contentsOf: binding.route.upstream.basePath)
                out.append(contentsOf: remainder)
            }
            if let query {
                out.append("?")
                out.append(contentsOf: query)
            }
            out.append(" HTTP/1.1\r\nhost: ")
            out.append(contentsOf: binding.route.upstream.hostHeader)
            out.append("\r\n")

            var clientHost: Range<Int>?
            HeadWriter.copyFields(bytes, fieldsStart: parsed.fieldsStart, length: parsed.length, into: &out) { field in
                let name = field.name
                if clientHost == nil, FieldName.equals(bytes, name, "host") { clientHost = field.value }
                return !HeaderPolicy.rules(of: bytes, name).isDisjoint(with: .notForwardedUp)
                    || (!parsed.connection.named.isEmpty
                        && parsed.connection.named.contains { FieldName.equals(bytes, name, $0) })
                    || (binding.editsHeaders && binding.edits(bytes, name))
            }

            switch parsed.framing {
            case .chunked:
                out.append("transfer-encoding: chunked\r\n")
            case .length(let length):
                out.append("content-length: ")
                out.append(contentsOf: String(length))
                out.append("\r\n")
            case .none, .untilClose:
                // RFC 9110 §8.6: a user agent SHOULD send Content-Length for a method that defines content, and many
                // servers answer 411 without it; a client's own `Content-Length: 0` is kept as said.
                let method = client.line.method
                if parsed.hasContentLength || method == .POST || method == .PUT || method == .PATCH {
                    out.append("content-length: 0\r\n")
                }
            }
            if !binding.headerRules.isEmpty {
                let host = clientHost.flatMap {
                    client.bytes.getString(at: client.bytes.readerIndex + $0.lowerBound, length: $0.count)
                }
                for rule in binding.headerRules {
                    rule.write(into: &out, clientHost: host, clientAddress: clientAddress)
                }
            }
            if webSocket { out.append("connection: upgrade\r\nupgrade: websocket\r\n") }
            if let authorization {
                out.append("authorization: ")
                out.append(contentsOf: authorization)
                out.append("\r\n")
            }
            if let proof {
                out.append("dpop: ")
                out.append(proof.span)
                out.append("\r\n")
            }
            out.append("x-request-id: ")
            out.append(contentsOf: requestID)
            out.append("\r\n\r\n")
        }
        return UpstreamRequestHead(
            bytes: out, chunked: parsed.framing == .chunked, isHead: parsed.isHead, asksToUpgrade: webSocket)
    }

    /// Rewrites a `Location` that points into `route`'s upstream (absolute, or path-absolute under its base path)
    /// to the same resource under the route's local prefix; any other value is returned unchanged.
    static func rewriteLocation(_ location: String, binding: RouteBinding) -> String {
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
