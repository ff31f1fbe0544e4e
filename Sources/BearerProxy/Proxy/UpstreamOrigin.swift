import NIOCore

/// Where upstream connections go and how they are secured: the key of the connection pool. Two routes with the same
/// origin and CA file share pooled connections; the path plays no part.
struct UpstreamOrigin: Hashable, Sendable {
    let scheme: Upstream.Scheme
    let host: String
    let port: Int
    let caFile: String?

    init(_ route: Route) {
        scheme = route.upstream.scheme
        host = route.upstream.host
        port = route.upstream.port
        caFile = route.upstream.scheme == .https ? route.tls.caFile : nil
    }

    /// The name to send in TLS SNI and to verify the certificate against. RFC 6066 §3 forbids IP literals in SNI;
    /// with nil, swift-nio-ssl verifies the certificate's IP addresses against the peer's address instead.
    var tlsServerName: String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    /// `scheme://host:port`, for messages.
    var display: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(bracketed):\(port)"
    }
}
