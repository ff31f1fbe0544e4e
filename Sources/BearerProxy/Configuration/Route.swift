/// One entry of `routes`: requests under `prefix` go to `upstream` with the token `auth` describes.
public struct Route: Sendable {
    /// Starts with `/`, no trailing `/` (except the root `/`); matched on whole path segments.
    public var prefix: String
    public var upstream: Upstream
    public var auth: RouteAuth
    /// Default: none.
    public var headers: HeaderRules
    /// From `timeoutSeconds` (0 < t ≤ 86400); `nil` = the data plane's default.
    public var timeout: Duration?
    /// From `idleTimeoutSeconds` (0 < t ≤ 86400): how long a WebSocket tunnel on this route may carry no byte either
    /// way; `nil` = the connection's idle limit.
    public var idleTimeout: Duration?
    /// Uppercased method tokens; `nil` = every method (other methods get 405).
    public var methods: Set<String>?
    /// Default false: `http` upstreams are refused unless the host is loopback.
    public var allowInsecureUpstream: Bool
    /// Default false: when true, add `X-Forwarded-For`, `-Proto` and `-Host`.
    public var forwardedHeaders: Bool
    /// The route's own `tls.caFile`, else the global one.
    public var tls: TLSSettings

    public init(
        prefix: String,
        upstream: Upstream,
        auth: RouteAuth,
        headers: HeaderRules = .empty,
        timeout: Duration? = nil,
        idleTimeout: Duration? = nil,
        methods: Set<String>? = nil,
        allowInsecureUpstream: Bool = false,
        forwardedHeaders: Bool = false,
        tls: TLSSettings = TLSSettings()
    ) {
        self.prefix = prefix
        self.upstream = upstream
        self.auth = auth
        self.headers = headers
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.methods = methods
        self.allowInsecureUpstream = allowInsecureUpstream
        self.forwardedHeaders = forwardedHeaders
        self.tls = tls
    }
}
