import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// Idle keep-alive connections to upstreams, one pool per event loop so that a connection is only ever used on the
/// loop that owns the downstream connection (no locks, no cross-thread hops; SPEC §3).
final class UpstreamPool {
    /// One origin's idle connections. A class, so that taking one out is a lookup and a `popLast` in place: the
    /// dictionary's `modify` accessor that `idle[origin]?.popLast()` used allocated a coroutine frame on every
    /// request (bench/counts.sh).
    private final class Idle {
        var handlers: [UpstreamHandler] = []
    }

    private var idle: [UpstreamOrigin: Idle] = [:]
    /// The origin used last and its list: most requests on a loop go where the one before went, and comparing an
    /// origin costs less than hashing it twice a request (take and park). Cleared wherever `idle` is replaced, so that
    /// it never names a list the pool no longer holds.
    private var lastUsed: (origin: UpstreamOrigin, list: Idle)?
    /// At most this many idle connections per origin; more are closed instead of kept.
    let maximumIdlePerOrigin: Int
    /// Idle connections older than this are closed by ``evictIdle(now:)``, well before common upstream keep-alive
    /// timeouts (nginx 75 s), to make the stale-connection race rare.
    let idleTimeout: TimeAmount

    init(maximumIdlePerOrigin: Int = 128, idleTimeout: TimeAmount = .seconds(30)) {
        self.maximumIdlePerOrigin = maximumIdlePerOrigin
        self.idleTimeout = idleTimeout
    }

    /// The most recently used live connection to `origin`, if any (LIFO keeps the warmest one busy).
    func take(_ origin: UpstreamOrigin) -> UpstreamHandler? {
        let list = self.list(for: origin)
        while let handler = list.handlers.popLast() {
            if handler.isActive { return handler }
        }
        return nil
    }

    /// Keeps `handler` for reuse — only in a state where it can serve the next request — or closes it when it
    /// cannot, or when the pool for its origin is full.
    func park(_ handler: UpstreamHandler, now: NIODeadline) {
        let list = self.list(for: handler.origin)
        guard list.handlers.count < maximumIdlePerOrigin, handler.prepareForReuse(now: now) else {
            handler.close()
            return
        }
        list.handlers.append(handler)
    }

    /// `origin`'s list, made empty on first use.
    private func list(for origin: UpstreamOrigin) -> Idle {
        if let lastUsed, lastUsed.origin == origin { return lastUsed.list }
        let list: Idle
        if let existing = idle[origin] {
            list = existing
        } else {
            list = Idle()
            idle[origin] = list
        }
        lastUsed = (origin, list)
        return list
    }

    /// Forgets `handler` (its connection closed while idle).
    package func remove(_ handler: UpstreamHandler) {
        idle[handler.origin]?.handlers.removeAll { $0 === handler }
    }

    /// Closes connections that have been idle longer than ``idleTimeout``.
    func evictIdle(now: NIODeadline) {
        for list in idle.values {
            // Filtered from a copy: closing one may remove it from the list (``remove(_:)``) meanwhile.
            let handlers = list.handlers
            list.handlers = handlers.filter { !$0.closeIfIdle(now: now, limit: idleTimeout) }
        }
    }

    /// Closes every idle connection (shutdown).
    func closeAll() {
        let all = idle.values.flatMap(\.handlers)
        idle = [:]
        lastUsed = nil
        for handler in all { handler.close() }
    }
}
