import Metrics
import NIOCore
import Prometheus
import Synchronization

/// The proxy's metrics (SPEC §9 `/-/metrics`), through swift-metrics with a Prometheus registry of its own — one
/// per proxy, not a process-global bootstrap, so that several proxies (and tests) never mix their numbers.
///
/// | metric | kind | labels |
/// |---|---|---|
/// | `bearer_proxy_requests_total` | counter | `route`, `method`, `status_class` |
/// | `bearer_proxy_upstream_duration_seconds` | histogram | `route` (request sent → response head) |
/// | `bearer_proxy_request_bytes_total`, `bearer_proxy_response_bytes_total` | counter | `route` (bodies) |
/// | `bearer_proxy_active_connections` | gauge | — |
/// | `bearer_proxy_accept_paused_total` | counter | `reason` (`connection_limit`, `accept_error`: out of descriptors) |
/// | `bearer_proxy_token_requests_total` | counter | `flow`, `outcome` |
/// | `bearer_proxy_token_cache_total` | counter | `result` (`hit`, `miss`) |
/// | `bearer_proxy_token_refreshes_total` | counter | `outcome` |
/// | `bearer_proxy_token_cache_write_failures_total` | counter | — (writes of the token cache file that failed) |
/// | `bearer_proxy_token_cache_unsaved` | gauge | — (1 while memory holds changes the file lacks) |
/// | `bearer_proxy_discovered_signins_unsaved` | gauge | — (discovered routes' sign-ins memory holds and the file lacks) |
/// | `bearer_proxy_discoveries_total` | counter | `route`, `outcome` (a discovered route's discovery again) |
/// | `bearer_proxy_step_ups_total` | counter | `route` (a discovered route's `403` `insufficient_scope`) |
///
/// Labels are bounded: routes are the configured prefixes (`-` for the proxy's own endpoints, `none` for
/// unrouted requests), methods outside RFC 9110's set become `OTHER`. No label ever carries a token or a path.
public final class ProxyMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    package let activeConnections: Metrics.Meter
    package let tokenCacheHits: Metrics.Counter
    package let tokenCacheMisses: Metrics.Counter
    let tokenCacheWriteFailures: Metrics.Counter
    let tokenCacheUnsavedGauge: Metrics.Gauge
    let discoveredSignInsUnsavedGauge: Metrics.Gauge
    /// How many discovered routes' refreshed sign-ins memory holds because their write failed.
    private let discoveredSignInsUnsaved = Atomic<Int>(0)

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
        ]
        self.factory = factory
        activeConnections = Metrics.Meter(label: "bearer_proxy_active_connections", factory: factory)
        tokenCacheHits = Metrics.Counter(
            label: "bearer_proxy_token_cache_total", dimensions: [("result", "hit")], factory: factory)
        tokenCacheMisses = Metrics.Counter(
            label: "bearer_proxy_token_cache_total", dimensions: [("result", "miss")], factory: factory)
        // Made at start, so an alert on them sees 0 rather than no series until the first failure.
        tokenCacheWriteFailures = Metrics.Counter(
            label: "bearer_proxy_token_cache_write_failures_total", factory: factory)
        tokenCacheUnsavedGauge = Metrics.Gauge(label: "bearer_proxy_token_cache_unsaved", factory: factory)
        tokenCacheUnsavedGauge.record(0)
        discoveredSignInsUnsavedGauge = Metrics.Gauge(
            label: "bearer_proxy_discovered_signins_unsaved", factory: factory)
        discoveredSignInsUnsavedGauge.record(0)
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func render() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// Idle keep-alive client connections closed to make room at the connection cap (``ConnectionLimiter``).
    package var idleClosedAtLimit: Metrics.Counter {
        Metrics.Counter(label: "bearer_proxy_idle_connections_closed_total", dimensions: [], factory: factory)
    }

    /// The counter of connections closed at once, before anything was read, for `reason` (SPEC §9: `peer_user`,
    /// `peer_unknown`).
    package func connectionsRefused(reason: String) -> Metrics.Counter {
        Metrics.Counter(
            label: "bearer_proxy_connections_refused_total", dimensions: [("reason", reason)], factory: factory)
    }

    /// The counter of HTTP/2 upstream connections that ended, by why (docs/operations.md): `goaway` (the upstream
    /// said so), `connection_error` (it broke the protocol or flooded, and the proxy sent GOAWAY), `stream_error`
    /// (a stream it answered was malformed: the connection took no new stream), `flow_control_stalled`,
    /// `ping_timeout` (an idle connection's PING had no ACK), `idle` (the proxy retired it), `closed` (none of these:
    /// the upstream or the network closed it, or the proxy shut down).
    package func upstreamHTTP2ConnectionsEnded(reason: String) -> Metrics.Counter {
        Metrics.Counter(
            label: "bearer_proxy_upstream_http2_connections_ended_total", dimensions: [("reason", reason)],
            factory: factory)
    }

    /// The counter of requests the request codec refused (SPEC §3: a refusal of a real client's request must be seen),
    /// by its reason (`bare_lf`, `obs_fold`, `head_too_large`, …: docs/configuration.md lists them).
    package func requestsRefused(reason: String) -> Metrics.Counter {
        Metrics.Counter(
            label: "bearer_proxy_requests_refused_total", dimensions: [("reason", reason)], factory: factory)
    }

    /// The counter of events a lifecycle machine received in a state where they cannot happen: each closed its
    /// connections rather than being ignored.
    package func stateErrors(machine: String) -> Metrics.Counter {
        Metrics.Counter(label: "bearer_proxy_state_errors_total", dimensions: [("machine", machine)], factory: factory)
    }

    /// The counter of pauses in accepting connections for `reason` (``ConnectionLimiter``).
    package func acceptPaused(reason: String) -> Metrics.Counter {
        Metrics.Counter(label: "bearer_proxy_accept_paused_total", dimensions: [("reason", reason)], factory: factory)
    }

    /// Counts a token request and its outcome.
    package func tokenRequest(flow: String, outcome: String) {
        Metrics.Counter(
            label: "bearer_proxy_token_requests_total", dimensions: [("flow", flow), ("outcome", outcome)],
            factory: factory
        ).increment()
    }

    /// Counts a write of the token cache file that failed.
    package func tokenCacheWriteFailed() {
        tokenCacheWriteFailures.increment()
    }

    /// Whether memory holds changes the token cache file lacks (a failed write not yet made good).
    package func tokenCacheUnsaved(_ unsaved: Bool) {
        tokenCacheUnsavedGauge.record(unsaved ? 1 : 0)
    }

    /// A discovered route's refreshed sign-in that memory holds because its write failed (true), or no longer
    /// (false: written, or replaced in the file).
    package func discoveredSignInUnsaved(_ held: Bool) {
        let now = discoveredSignInsUnsaved.add(held ? 1 : -1, ordering: .relaxed).newValue
        discoveredSignInsUnsavedGauge.record(now)
    }

    /// Counts a background refresh and its outcome.
    package func tokenRefresh(outcome: String) {
        Metrics.Counter(
            label: "bearer_proxy_token_refreshes_total", dimensions: [("outcome", outcome)], factory: factory
        )
        .increment()
    }

    /// Counts a discovered route's discovery run again after its upstream refused its token, by what it said:
    /// `confirmed`, `changed` (another authorization server or resource), `unavailable` (failed for now: the stored
    /// metadata was used), `refused` (the metadata is not usable).
    package func discovery(route: String, outcome: String) {
        Metrics.Counter(
            label: "bearer_proxy_discoveries_total", dimensions: [("route", route), ("outcome", outcome)],
            factory: factory
        ).increment()
    }

    /// Counts a discovered route's `403` `insufficient_scope` (SPEC §6.3) by `outcome`: `answered` (with the problem
    /// naming `login ROUTE --scopes`, no sign-in tried), `reauthorized` (`"stepUp": "auto"`: serve's sign-in for more
    /// scopes gave a token, and the request went again) or `declined` (that sign-in gave none in time: declined, not
    /// finished, or refused by its bounds — the problem was answered).
    package func stepUp(route: String, outcome: String) {
        Metrics.Counter(
            label: "bearer_proxy_step_ups_total", dimensions: [("route", route), ("outcome", outcome)],
            factory: factory
        ).increment()
    }

    /// The handles for one route, made once per event loop and route (metric creation takes the registry's lock;
    /// incrementing a made one does not).
    package func route(_ label: String) -> RouteMetrics {
        RouteMetrics(route: label, factory: factory)
    }
}

/// One route's metric handles, cached per event loop; each is made when first needed, so a route that never
/// reaches an upstream has no empty latency histogram.
package final class RouteMetrics {
    /// The route's label, as its series name it.
    package let route: String
    private let factory: PrometheusMetricsFactory
    /// Keyed by method and status class without building a string per request.
    private struct RequestKey: Hashable {
        let method: String
        let statusClass: UInt
    }
    private var requests: [RequestKey: Metrics.Counter] = [:]
    /// The counter used last: a route's requests mostly repeat their method and status class, and comparing the
    /// key costs less than hashing it.
    private var lastRequests: (key: RequestKey, counter: Metrics.Counter)?
    private var upstreamDuration: Metrics.Timer?
    private var requestBytes: Metrics.Counter?
    private var responseBytes: Metrics.Counter?
    /// Requests seen on this loop (for `/-/status`).
    package var count = 0

    package init(route: String, factory: PrometheusMetricsFactory) {
        self.route = route
        self.factory = factory
    }

    /// Counts one finished request.
    package func record(method: String, status: UInt, bytesIn: Int, bytesOut: Int, upstream: TimeAmount?) {
        count += 1
        let key = RequestKey(method: method, statusClass: status / 100)
        let counter: Metrics.Counter
        if let last = lastRequests, last.key == key {
            counter = last.counter
        } else if let known = requests[key] {
            counter = known
            lastRequests = (key, known)
        } else {
            counter = Metrics.Counter(
                label: "bearer_proxy_requests_total",
                dimensions: [("route", route), ("method", method), ("status_class", "\(status / 100)xx")],
                factory: factory)
            requests[key] = counter
            lastRequests = (key, counter)
        }
        counter.increment()
        if bytesIn > 0 {
            if requestBytes == nil {
                requestBytes = Metrics.Counter(
                    label: "bearer_proxy_request_bytes_total", dimensions: [("route", route)], factory: factory)
            }
            requestBytes?.increment(by: bytesIn)
        }
        if bytesOut > 0 {
            if responseBytes == nil {
                responseBytes = Metrics.Counter(
                    label: "bearer_proxy_response_bytes_total", dimensions: [("route", route)], factory: factory)
            }
            responseBytes?.increment(by: bytesOut)
        }
        if let upstream {
            if upstreamDuration == nil {
                upstreamDuration = Metrics.Timer(
                    label: "bearer_proxy_upstream_duration_seconds", dimensions: [("route", route)],
                    preferredDisplayUnit: .seconds, factory: factory)
            }
            upstreamDuration?.recordNanoseconds(upstream.nanoseconds)
        }
    }

    /// RFC 9110's methods keep their name; anything else is counted as `OTHER` so labels stay bounded.
    package static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH": method
        default: "OTHER"
        }
    }
}
