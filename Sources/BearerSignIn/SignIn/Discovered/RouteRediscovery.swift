import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Discovery run again for a discovered route whose upstream refused the route's token (SPEC §6.3): the token may have
/// been revoked, or the resource may now name another authorization server — which must then get nothing of the old
/// sign-in. At most once per route per ``interval``, whatever the number of refused requests: in between, the last
/// outcome stands, so a storm of 401s is never a storm of metadata requests.
package final class RouteRediscovery: Sendable {
    /// What the discovery says about the stored sign-in.
    enum Verdict: Sendable, Equatable {
        /// The same authorization server and resource: its fresh endpoints are used.
        case confirmed(DiscoveredAuthorization)
        /// The upstream now names another authorization server (or resource): the stored sign-in is not used.
        case changed(issuer: String, resource: String)
        /// Discovery could not finish for now (no answer, 5xx): the metadata stored with the sign-in is used.
        case unavailable(DiscoveryError)
        /// Discovery finished and refused what it found (a mismatch, no PKCE, an unsafe URL): nothing stored
        /// stands in for it.
        case refused(DiscoveryError)
    }

    /// How long one discovery's outcome stands for a route.
    package static let interval: TimeInterval = 30

    private let route: String
    private let discover: @Sendable () async throws(DiscoveryError) -> DiscoveredAuthorization
    private let logger: Logger
    private let metrics: ProxyMetrics?
    private let last = Mutex<(at: Date, outcome: Result<DiscoveredAuthorization, DiscoveryError>)?>(nil)

    /// - Parameters:
    ///   - route: the route's prefix, for the log lines and the metric's label.
    ///   - discover: discovery for the route, as `bearer-proxy discover ROUTE` runs it.
    package init(
        route: String, logger: Logger, metrics: ProxyMetrics? = nil,
        discover: @escaping @Sendable () async throws(DiscoveryError) -> DiscoveredAuthorization
    ) {
        self.route = route
        self.logger = logger
        self.metrics = metrics
        self.discover = discover
    }

    /// The verdict on the sign-in under `key`, discovering again unless the last discovery is younger than
    /// ``interval``. The caller asks once at a time per route (the route's token cache fetches one token at a time).
    func verdict(on key: DiscoveredSignInKey, at now: Date) async -> Verdict {
        let recent = last.withLock { last -> Result<DiscoveredAuthorization, DiscoveryError>? in
            guard let last, now >= last.at, now.timeIntervalSince(last.at) < Self.interval else { return nil }
            return last.outcome
        }
        let outcome: Result<DiscoveredAuthorization, DiscoveryError>
        if let recent {
            outcome = recent
        } else {
            logger.info("discovery started: the upstream refused the route's token", metadata: ["route": "\(route)"])
            do {
                outcome = .success(try await discover())
            } catch {
                outcome = .failure(error)
            }
            last.withLock { $0 = (now, outcome) }
        }
        let verdict = Self.verdict(outcome, on: key)
        if recent == nil { record(verdict) }
        return verdict
    }

    private static func verdict(
        _ outcome: Result<DiscoveredAuthorization, DiscoveryError>, on key: DiscoveredSignInKey
    ) -> Verdict {
        switch outcome {
        case .success(let found) where found.issuer == key.issuer && found.resource == key.resource:
            .confirmed(found)
        case .success(let found):
            .changed(issuer: found.issuer, resource: found.resource)
        case .failure(let error):
            error.isTransient ? .unavailable(error) : .refused(error)
        }
    }

    /// One log line and one count per discovery that ran: never a token (discovery handles none), only URLs the
    /// servers published and the reason, quoted as ``DiscoveryError`` quotes them.
    private func record(_ verdict: Verdict) {
        let outcome: String
        switch verdict {
        case .confirmed(let found):
            outcome = "confirmed"
            logger.info(
                "discovery succeeded: the same authorization server",
                metadata: ["route": "\(route)", "issuer": "\(found.issuer)"])
        case .changed(let issuer, _):
            outcome = "changed"
            logger.warning(
                "discovery succeeded: another authorization server or resource; the route's sign-in is set aside",
                metadata: ["route": "\(route)", "issuer": "\(DiscoveryError.shown(issuer))"])
        case .unavailable(let error):
            outcome = "unavailable"
            logger.warning(
                "discovery failed for now; the metadata stored with the sign-in is used",
                metadata: ["route": "\(route)", "reason": "\(error.explanation)"])
        case .refused(let error):
            outcome = "refused"
            logger.error(
                "discovery failed: nothing stored is used",
                metadata: ["route": "\(route)", "reason": "\(error.explanation)"])
        }
        metrics?.discovery(route: route, outcome: outcome)
    }
}
