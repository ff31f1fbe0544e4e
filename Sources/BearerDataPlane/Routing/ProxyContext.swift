import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOSSL
import Synchronization

/// A generation: everything a request needs that is fixed once a configuration is installed — routes (with their
/// TLS contexts, one per CA file: building a context parses the trust store, so it is done here, once, never per
/// connection), tokens, the `/-/` endpoints and time limits. An exchange keeps the one it began with until it ends,
/// replays included, whatever a reload installs meanwhile (SPEC §9); the generation counts its exchanges, so that a
/// reload can release what only the old one uses (its account's HTTP client) once the last of them has ended
/// (``RetiringGenerations``).
package final class ProxyContext: Sendable {
    package let configuration: Configuration
    package let tokens: TokenCache
    /// The `/-/` endpoints (``AdminEndpoints``, passed in by `Runtime/`).
    let admin: any LocalEndpoints
    package let requestGuard: RequestGuard
    package let timeouts: ProxyTimeouts
    /// One per route, in routes.json order (``RouteMatch/position`` indexes it); a discovered route's binding
    /// carries its own token cache, `discoveredTokens[prefix]`, and an on-behalf-of route its callers' caches,
    /// `subjectTokens[prefix]`.
    let bindings: [RouteBinding]
    /// Exchanges that began with this generation and have not ended.
    private let inFlight = Atomic<Int>(0)

    package init(
        configuration: Configuration, tokens: TokenCache, admin: any LocalEndpoints, policy: SafetyPolicy,
        timeouts: ProxyTimeouts, discoveredTokens: [String: TokenCache] = [:],
        subjectTokens: [String: SubjectTokenCaches] = [:], nonces: UpstreamNonceStore = UpstreamNonceStore()
    ) throws {
        self.configuration = configuration
        self.tokens = tokens
        self.admin = admin
        self.requestGuard = RequestGuard(policy: policy)
        self.timeouts = timeouts
        var contexts: [String: UpstreamTLS] = [:]
        self.bindings = try configuration.routes.routes.map { route in
            try RouteBinding(
                route, timeouts: timeouts, discoveredTokens: discoveredTokens[route.prefix],
                subjectTokens: subjectTokens[route.prefix], nonce: nonces.nonce(forOrigin:)
            ) { caFile, version in
                let key = "\(version.rawValue) \(caFile ?? "")"
                if let made = contexts[key] { return made }
                let made = try UpstreamTLS(caFile: caFile, version: version)
                contexts[key] = made
                return made
            }
        }
    }

    /// An exchange began with this generation (called while the installed generation is read, under the same lock as
    /// an install, so a replaced generation gains none).
    package func exchangeBegan() {
        inFlight.add(1, ordering: .relaxed)
    }

    /// An exchange that began with this generation has ended (its ``Exchange`` is gone).
    func exchangeEnded() {
        inFlight.subtract(1, ordering: .releasing)
    }

    /// Whether an exchange that began with this generation has not ended yet (``RetiringGenerations``).
    package var hasExchanges: Bool {
        inFlight.load(ordering: .acquiring) > 0
    }
}
