import NIOCore
import NIOSSL

/// Everything a request needs that is fixed once a configuration is installed: routes, tokens, the `/-/`
/// endpoints, time limits and one TLS context per CA file (building a context parses the trust store, so it is
/// done here, once, never per connection).
final class ProxyContext: Sendable {
    let configuration: Configuration
    let tokens: TokenCache
    let admin: AdminEndpoints
    let requestGuard: RequestGuard
    let timeouts: ProxyTimeouts
    /// One per route, in routes.json order (``RouteMatch/position`` indexes it).
    let bindings: [RouteBinding]
    private let tlsContexts: [String: NIOSSLContext]

    init(
        configuration: Configuration, tokens: TokenCache, admin: AdminEndpoints, policy: SafetyPolicy,
        timeouts: ProxyTimeouts
    ) throws {
        self.configuration = configuration
        self.tokens = tokens
        self.admin = admin
        self.requestGuard = RequestGuard(policy: policy)
        self.timeouts = timeouts
        self.bindings = configuration.routes.routes.map { RouteBinding($0, timeouts: timeouts) }
        var contexts: [String: NIOSSLContext] = [:]
        for route in configuration.routes.routes where route.upstream.scheme == .https {
            let key = route.tls.caFile ?? ""
            guard contexts[key] == nil else { continue }
            var tls = TLSConfiguration.makeClientConfiguration()
            // swift-nio-ssl ignores SSL_CERT_FILE (data-plane pitfall 9): a private CA must be configured here.
            if let caFile = route.tls.caFile { tls.trustRoots = .file(caFile) }
            contexts[key] = try NIOSSLContext(configuration: tls)
        }
        self.tlsContexts = contexts
    }

    /// The TLS context for connections to `origin`, nil for plain http.
    func tlsContext(for origin: UpstreamOrigin) -> NIOSSLContext? {
        origin.scheme == .https ? tlsContexts[origin.caFile ?? ""] : nil
    }

    /// The response-head limit for `route`.
}
