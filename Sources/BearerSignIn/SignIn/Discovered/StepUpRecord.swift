import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Dispatch
import Logging
import Synchronization

/// What a discovered route's upstream last said of the route's token, kept with the route's sign-in so that `status`
/// — `/-/status` here, and `bearer-proxy status` in another process — shows a route whose last answer was a `403`
/// `insufficient_scope` as needing a step-up, with the scopes it asked for.
///
/// The data plane hears the answers on its event loops (through the route's token cache, ``TokenCacheChange``), where
/// no file may be written: the file is written on a serial queue instead, in the order the answers came, and only
/// when the answer changes what it says — not once per request.
package final class StepUpRecord: Sendable {
    /// What the file says, as far as this process knows.
    private enum Known: Equatable {
        /// Not known yet: an earlier run may have left a step-up in the file, which the next answer clears.
        case unknown
        case noStepUp
        case stepUp([String])
    }

    private let route: String
    private let upstream: String
    private let store: DiscoveredSignInStore
    private let writes: DispatchQueue
    private let logger: Logger
    private let known = Mutex(Known.unknown)

    /// - Parameter writes: a serial queue, shared by the routes (``DiscoveredRouteTokens`` flushes it).
    package init(route: String, upstream: String, store: DiscoveredSignInStore, writes: DispatchQueue, logger: Logger) {
        self.route = route
        self.upstream = upstream
        self.store = store
        self.writes = writes
        self.logger = logger
    }

    /// Takes note of what the route's token cache was told; only an upstream's answer counts.
    package func heard(_ change: TokenCacheChange) {
        let now: Known
        switch change {
        case .insufficientScope(_, let wanted): now = .stepUp(wanted)
        case .answered, .rejected: now = .noStepUp
        case .stored: return
        case .replacedAll:
            // The tokens followed the file (a `login` or `logout` elsewhere): what it says now is not known here, and
            // the next answer is written whatever it is.
            known.withLock { $0 = .unknown }
            return
        }
        let changed = known.withLock { known in
            guard known != now else { return false }
            known = now
            return true
        }
        guard changed else { return }
        writes.async { self.write(now) }
    }

    /// Writes `now` into the sign-in the route uses. A step-up to scopes the sign-in already has (a `login
    /// --scopes` stored meanwhile, by this process or another) is not one.
    private func write(_ now: Known) {
        do {
            guard let key = try store.routeKey(upstream: upstream) else { return }
            try store.updateSignIn(key) { stored in
                guard var signIn = stored else { return }
                switch now {
                case .stepUp(let wanted) where !Set(wanted).isSubset(of: signIn.grantedScopes ?? signIn.scopes):
                    signIn.stepUpScopes = wanted
                case .stepUp, .noStepUp, .unknown:
                    signIn.stepUpScopes = nil
                }
                stored = signIn
            }
        } catch {
            logger.error("\(route): the upstream's answer could not be noted for status: \(error)")
        }
    }
}
