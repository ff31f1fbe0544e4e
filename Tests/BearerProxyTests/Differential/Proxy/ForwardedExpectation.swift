/// What the upstream must receive for a message the client sent (issue #24 condition 3, SPEC §8): the client's
/// message less the hop-by-hop fields and the fields the proxy decides itself, plus the proxy's own Host,
/// Authorization, request id and framing — with the same method, the target moved from the route's prefix to the
/// upstream's base path, the same body bytes, and no trailer fields (SPEC §8 drops them).
///
/// Written out here from the RFCs and the SPEC rather than read from the product's `HeaderPolicy`, so that the
/// product is checked against the contract, not against itself.
struct ForwardedExpectation {
    /// RFC 9110 §7.6.1 and the names Go's httputil drops "as of RFC 7230", plus those the client names in
    /// `Connection`.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]
    /// SPEC §8: the proxy writes its own Host (RFC 9110 §7.2), credential, request id and framing (RFC 9112 §6.3).
    static let setByProxy: Set<String> = [
        "host", "authorization", "x-request-id", "content-length", "transfer-encoding",
    ]
    /// SPEC §8-9: spoofable forwarding fields and the proxy's own client key never go up.
    static let dropped: Set<String> = ["forwarded", "x-bearer-proxy-key"]

    /// The route under test: `/api` on the proxy is `/base` on the upstream (``RawUpstream/route(to:caFile:extra:)``).
    let prefix = "/api"
    let basePath = "/base"
    /// `127.0.0.1:<port>` of the upstream.
    let upstreamHost: String

    /// The differences between what the upstream got and what it should have got for `client`; empty when none.
    func differences(client: FramedMessage, forwarded: FramedMessage) -> [String] {
        var differences: [String] = []
        if forwarded.method != client.method {
            differences.append("method \(forwarded.method ?? "-") for \(client.method ?? "-")")
        }
        if let target = client.target, forwarded.target != upstreamTarget(target) {
            differences.append("target \(forwarded.target ?? "-") for \(target)")
        }
        if forwarded.body != client.body {
            differences.append("body of \(forwarded.body.count) byte(s) for \(client.body.count)")
        }
        if forwarded.version != "HTTP/1.1" { differences.append("version \(forwarded.version)") }
        let expected = endToEnd(client.fields)
        // A WebSocket handshake goes up with the proxy's own `Connection: upgrade` and `Upgrade: websocket`
        // (RFC 6455 §4.1; `WebSocketUpgrade`): the client's are hop-by-hop like any other.
        let ownHandshake: Set<String> = isWebSocketHandshake(client) ? ["connection", "upgrade"] : []
        let received = forwarded.fields.map(\.normalized).filter {
            !Self.setByProxy.contains($0.name) && !ownHandshake.contains($0.name)
        }
        if FramedMessage.group(received) != FramedMessage.group(expected) {
            differences.append("fields \(received) for \(expected)")
        }
        // SPEC §8: request trailers are dropped (the body goes up framed once, trailers and all, by the proxy).
        if !forwarded.trailers.isEmpty { differences.append("trailers \(forwarded.trailers), none expected") }
        differences += proxyFields(forwarded)
        return differences
    }

    /// A GET asking for `Upgrade: websocket` with the `upgrade` connection option (RFC 6455 §4.1).
    func isWebSocketHandshake(_ message: FramedMessage) -> Bool {
        let fields = message.fields.map { ($0.name, $0.value) }
        return message.method == "GET" && SwitchingProtocols.isUpgrade(method: "GET", fields)
            && message.fields.contains { $0.name == "upgrade" && Latin1.lowercased($0.value) == "websocket" }
    }

    /// The client's field lines that go up as they are.
    func endToEnd(_ fields: [FieldLine]) -> [FieldLine] {
        let lines = fields.map(\.normalized)
        let named = Set(
            lines.filter { $0.name == "connection" }.flatMap { $0.value.split(separator: ",") }
                .map { Latin1.lowercased(String($0).trimmingWhitespace) })
        return lines.filter { line in
            !Self.hopByHop.contains(line.name) && !Self.setByProxy.contains(line.name)
                && !Self.dropped.contains(line.name) && !line.name.hasPrefix("x-forwarded-")
                && !named.contains(line.name)
        }
    }

    /// The proxy's own fields: once each, with its values.
    func proxyFields(_ forwarded: FramedMessage) -> [String] {
        let lines = forwarded.fields.map(\.normalized)
        func values(_ name: String) -> [String] { lines.filter { $0.name == name }.map(\.value) }
        var differences: [String] = []
        if values("host") != [upstreamHost] { differences.append("host \(values("host"))") }
        if values("authorization").count != 1 || values("authorization").first?.hasPrefix("Bearer ") != true {
            differences.append("authorization \(values("authorization").count) field(s)")
        }
        if values("x-request-id").count != 1 { differences.append("x-request-id \(values("x-request-id"))") }
        let framing = values("content-length").count + values("transfer-encoding").count
        if framing > 1 { differences.append("framing fields \(framing)") }
        return differences
    }

    /// The route's prefix replaced by the upstream's base path, from origin-form or absolute-form (RFC 9112 §3.2).
    func upstreamTarget(_ target: String) -> String {
        var path = Substring(target)
        for scheme in ["http://", "https://"] where path.lowercased().hasPrefix(scheme) {
            path = path.dropFirst(scheme.count)
            path = path.firstIndex(of: "/").map { path[$0...] } ?? "/"
        }
        guard path.hasPrefix(prefix) else { return String(path) }
        return basePath + path.dropFirst(prefix.count)
    }
}

extension String {
    /// Without the spaces and tabs around it (RFC 9110 §5.6.1 OWS around list elements).
    var trimmingWhitespace: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
