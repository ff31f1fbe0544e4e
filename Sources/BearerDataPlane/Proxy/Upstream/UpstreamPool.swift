import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// Idle keep-alive connections to upstreams, one pool per event loop so that a connection is only ever used on the
/// loop that owns the downstream connection (no locks, no cross-thread hops; SPEC §3).
package final class UpstreamPool {
    private var idle: [UpstreamOrigin: [UpstreamHandler]] = [:]
    /// At most this many idle connections per origin; more are closed instead of kept.
    package let maximumIdlePerOrigin: Int
    /// Idle connections older than this are closed by ``evictIdle(now:)``, well before common upstream keep-alive
    /// timeouts (nginx 75 s), to make the stale-connection race rare.
    package let idleTimeout: TimeAmount

    package init(maximumIdlePerOrigin: Int = 128, idleTimeout: TimeAmount = .seconds(30)) {
        self.maximumIdlePerOrigin = maximumIdlePerOrigin
        self.idleTimeout = idleTimeout
    }

    /// The most recently used live connection to `origin`, if any (LIFO keeps the warmest one busy).
    package func take(_ origin: UpstreamOrigin) -> UpstreamHandler? {
        while let handler = idle[origin]?.popLast() {
            if handler.isActive { return handler }
        }
        return nil
    }

    /// Keeps `handler` for reuse — only in a state where it can serve the next request — or closes it when it
    /// cannot, or when the pool for its origin is full.
    package func park(_ handler: UpstreamHandler, now: NIODeadline) {
        guard idle[handler.origin, default: []].count < maximumIdlePerOrigin, handler.prepareForReuse(now: now) else {
            handler.close()
            return
        }
        idle[handler.origin, default: []].append(handler)
    }

    /// Forgets `handler` (its connection closed while idle).
    package func remove(_ handler: UpstreamHandler) {
        idle[handler.origin]?.removeAll { $0 === handler }
    }

    /// Closes connections that have been idle longer than ``idleTimeout``.
    package func evictIdle(now: NIODeadline) {
        for (origin, handlers) in idle {
            idle[origin] = handlers.filter { !$0.closeIfIdle(now: now, limit: idleTimeout) }
        }
    }

    /// Closes every idle connection (shutdown).
    package func closeAll() {
        let all = idle.values.joined()
        idle = [:]
        for handler in all { handler.close() }
    }
}
