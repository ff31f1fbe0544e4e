/// The server a route forwards to: scheme, host, port and the base path the rest of the request path is appended to.
///
/// Immutable once parsed, so the derived `hostHeader` and `url` can never disagree with the parts they come from.
public struct Upstream: Sendable, Hashable {
    /// The two schemes a route may forward to.
    public enum Scheme: String, Sendable, Hashable {
        case http
        case https

        /// 80 for http, 443 for https.
        public var defaultPort: Int { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// Lowercased; IPv6 literals without brackets.
    public let host: String
    /// The explicit port, or 80/443 from the scheme.
    public let port: Int
    /// Raw (percent-encoding kept), `""` for the root, never ending in `/`.
    public let basePath: String
    /// The `Host` header to send (RFC 9110 §7.2): `graph.microsoft.com`, `127.0.0.1:8080`, `[::1]:9000`.
    public let hostHeader: String
    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `::1`).
    public let isLoopback: Bool

    /// `scheme://hostHeader` + `basePath`, for logs and `status`.
    public var url: String { "\(scheme.rawValue)://\(hostHeader)\(basePath)" }

    /// Builds an upstream from validated parts; `basePath` loses any trailing `/`.
    init(scheme: Scheme, host: String, port: Int?, basePath: String) {
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? scheme.defaultPort
        var path = Substring(basePath)
        while path.hasSuffix("/") { path.removeLast() }
        self.basePath = String(path)
        let authority = HostName.bracketed(self.host)
        self.hostHeader = self.port == scheme.defaultPort ? authority : "\(authority):\(self.port)"
        self.isLoopback = HostName.isLoopback(self.host)
    }

    /// Parses an absolute `http`/`https` URL with no user info, query or fragment; `nil` if it is not one.
    ///
    /// This checks syntax only; the rule that `http` needs a loopback host or `allowInsecureUpstream`
    /// belongs to the route.
    public init?(parsing text: String) {
        guard let upstream = try? Upstream(validating: text) else { return nil }
        self = upstream
    }
}
