import NIOCore
import NIOSSL

/// Everything a request needs that is fixed once a configuration is installed: routes (with their TLS contexts,
/// one per CA file: building a context parses the trust store, so it is done here, once, never per connection),
/// tokens, the `/-/` endpoints and time limits. An exchange keeps the one it began with until it ends, replays
/// included, whatever a reload installs meanwhile (SPEC §9).
final class ProxyContext: Sendable {
    let configuration: Configuration
    let tokens: TokenCache
    let admin: AdminEndpoints
    let requestGuard: RequestGuard
    let timeouts: ProxyTimeouts
    /// One per route, in routes.json order (``RouteMatch/position`` indexes it).
    let bindings: [RouteBinding]

    init(
        configuration: Configuration, tokens: TokenCache, admin: AdminEndpoints, policy: SafetyPolicy,
        timeouts: ProxyTimeouts
    ) throws {
        self.configuration = configuration
        self.tokens = tokens
        self.admin = admin
        self.requestGuard = RequestGuard(policy: policy)
        self.timeouts = timeouts
        var contexts: [String: UpstreamTLS] = [:]
        self.bindings = try configuration.routes.routes.map { route in
            try RouteBinding(route, timeouts: timeouts) { caFile in
                if let made = contexts[caFile ?? ""] { return made }
                let made = try UpstreamTLS(caFile: caFile)
                contexts[caFile ?? ""] = made
                return made
            }
        }
    }
}
