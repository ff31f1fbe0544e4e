import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// Everything the data plane keeps per event loop: the upstream connector (with its pool) and the request-id sequence. Only code running
/// on `eventLoop` touches it, so it needs no lock.
package final class EventLoopState {
    let eventLoop: any EventLoop
    /// Where this loop's exchanges get their upstream connections, over the HTTP version each route chose.
    let connector: any UpstreamConnector
    private var requestIDs: RequestIDSequence
    /// What lasts until the loop has handled its current batch of events: flushes left for then, the token's clocks.
    let batch: EventBatch

    init(eventLoop: any EventLoop, connector: any UpstreamConnector = HTTPVersionConnector()) {
        self.eventLoop = eventLoop
        self.connector = connector
        self.batch = EventBatch(eventLoop: eventLoop)
        // Random per loop and process, so ids from two loops or two runs do not collide; a counter after it keeps
        // generating one cheap (no random syscall per request).
        self.requestIDs = RequestIDSequence(prefix: String(UInt64.random(in: 0...UInt64(UInt32.max)), radix: 16) + "-")
    }

    /// Metric handles per route label, made on first use on this loop.
    private var routeMetrics: [String: RouteMetrics] = [:]

    /// The handles of the route asked for last: most requests on a loop are for the route before them, and
    /// comparing its label costs less than hashing it. The handles carry their label, so the memo is one reference (a
    /// tuple of the label and the handles would cost a retain and a release of each: bench/counts.sh).
    private var lastRouteMetrics: RouteMetrics?

    package func metrics(for route: String, in metrics: ProxyMetrics) -> RouteMetrics {
        if let last = lastRouteMetrics, last.route == route { return last }
        let found = routeMetrics(for: route, in: metrics)
        lastRouteMetrics = found
        return found
    }

    private func routeMetrics(for route: String, in metrics: ProxyMetrics) -> RouteMetrics {
        if let known = routeMetrics[route] { return known }
        let made = metrics.route(route)
        routeMetrics[route] = made
        return made
    }

    /// The token this loop's last proxied request read from its route's cache, and that route: the next request for
    /// the route sends it again, without the cache's lock and lookups, for as long as the cache says that is what it
    /// would answer (``TokenCache/isStillReusable(_:)``: nothing changed, both clocks inside the margin). About 2 %
    /// of a request's CPU (docs/benchmarks.md).
    private var reusedTokenRoute: RouteBinding?
    private var reusedToken: TokenCache.ReusableToken?

    /// The usable token for `binding`'s scope set `key` from `tokens` (its cache), or nil when there is none to
    /// send now (``TokenCache/cachedToken(for:)``).
    ///
    /// The two clocks are read once a batch of events (``EventBatch``), not once a request: a token inside its
    /// margin — minutes — when the batch's first request read them is inside it for the rest of the batch, whose
    /// requests came from one `epoll_wait` and are answered within microseconds of each other. Read once a request,
    /// they would be 2 of a request's 4 clock readings, about 1 % of its CPU (docs/benchmarks.md). A change to the
    /// cache — the token refused, dropped, replaced, signed out of — still ends the reuse at once: that is asked on
    /// every request.
    func cachedToken(for binding: RouteBinding, key: ScopeSet, in tokens: TokenCache) -> AccessToken? {
        if reusedTokenRoute === binding, let reusedToken {
            if batch.tokenClocksRead {
                if tokens.isUnchanged(reusedToken) { return reusedToken.token }
            } else if tokens.isStillReusable(reusedToken) {
                batch.tokenClocksWereRead()
                return reusedToken.token
            }
        }
        let found = tokens.cachedToken(forReuse: key, presentedAs: binding.tokenType)
        reusedToken = found.reusable
        reusedTokenRoute = found.reusable == nil ? nil : binding
        // The lookup read both clocks and found the token inside its margin by each.
        if found.reusable != nil { batch.tokenClocksWereRead() }
        return found.token
    }

    /// Requests seen on this loop, per route label.
    package var requestCounts: [String: Int] { routeMetrics.mapValues(\.count) }

    /// A new request id: `<random>-<sequence>`.
    func nextRequestID() -> String {
        requestIDs.next()
    }
}
