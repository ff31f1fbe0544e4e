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

/// Discovery run again for a discovered route whose upstream refused the route's token (#25 items 1 and 3): the
/// token may have been revoked, or the resource may now name another authorization server — which must then get
/// nothing of the old sign-in. At most once per route per ``interval``, whatever the number of refused requests:
/// in between, the last outcome stands, so a storm of 401s is never a storm of metadata requests.
package final class RouteRediscovery: Sendable {
    /// What the discovery says about the stored sign-in.
    package enum Verdict: Sendable, Equatable {
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

    private let discover: @Sendable () async throws(DiscoveryError) -> DiscoveredAuthorization
    private let last = Mutex<(at: Date, outcome: Result<DiscoveredAuthorization, DiscoveryError>)?>(nil)

    /// - Parameter discover: discovery for the route, as `bearer-proxy discover ROUTE` runs it.
    package init(discover: @escaping @Sendable () async throws(DiscoveryError) -> DiscoveredAuthorization) {
        self.discover = discover
    }

    /// The verdict on the sign-in under `key`, discovering again unless the last discovery is younger than
    /// ``interval``. The caller asks once at a time per route (the route's token cache fetches one token at a time).
    package func verdict(on key: DiscoveredSignInKey, at now: Date) async -> Verdict {
        let recent = last.withLock { last -> Result<DiscoveredAuthorization, DiscoveryError>? in
            guard let last, now >= last.at, now.timeIntervalSince(last.at) < Self.interval else { return nil }
            return last.outcome
        }
        let outcome: Result<DiscoveredAuthorization, DiscoveryError>
        if let recent {
            outcome = recent
        } else {
            do {
                outcome = .success(try await discover())
            } catch {
                outcome = .failure(error)
            }
            last.withLock { $0 = (now, outcome) }
        }
        switch outcome {
        case .success(let found) where found.issuer == key.issuer && found.resource == key.resource:
            return .confirmed(found)
        case .success(let found):
            return .changed(issuer: found.issuer, resource: found.resource)
        case .failure(let error):
            return error.isTransient ? .unavailable(error) : .refused(error)
        }
    }
}
