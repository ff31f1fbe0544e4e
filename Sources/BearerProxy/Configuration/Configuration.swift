/// A validated routes.json: where to listen, the account to sign in with, the routes, and the safety settings.
///
/// Built only by `load`/`parse` (or in code from already-valid parts), so every value in it is valid.
public struct Configuration: Sendable {
    /// Default `127.0.0.1:8080`.
    public var listen: ListenAddress
    public var account: AccountConfiguration
    public var routes: RouteTable
    /// The global CA settings (routes inherit them unless they set their own); default: system roots only.
    public var tls: TLSSettings
    /// Extra names accepted in `Host` besides localhost, 127.0.0.1 and [::1]: lowercased, no port,
    /// IPv6 without brackets. Default none.
    public var allowedHosts: [String]
    /// Browser origins allowed to call the proxy, normalized `scheme://host[:port]` (RFC 6454 §6.2). Default none.
    public var allowedOrigins: [String]
    /// Default false: listening on a non-loopback address needs a client key unless this is true.
    public var allowRemote: Bool
    /// Default false: when true, every request must carry the client key, even on loopback.
    public var requireKey: Bool

    public init(
        listen: ListenAddress = .default,
        account: AccountConfiguration,
        routes: RouteTable,
        tls: TLSSettings = TLSSettings(),
        allowedHosts: [String] = [],
        allowedOrigins: [String] = [],
        allowRemote: Bool = false,
        requireKey: Bool = false
    ) {
        self.listen = listen
        self.account = account
        self.routes = routes
        self.tls = tls
        self.allowedHosts = allowedHosts
        self.allowedOrigins = allowedOrigins
        self.allowRemote = allowRemote
        self.requireKey = requireKey
    }

    /// The environment variable holding the client key (`Proxy-Authorization: Bearer <key>`, SPEC §9).
    public static let clientKeyVariable = "BEARER_PROXY_KEY"
}
