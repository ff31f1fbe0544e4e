import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// The life of one upstream connection (#23 item 2): made for an exchange, leased to one exchange at a time, idle in
/// its loop's pool between them, closed. It owns the two facts that decide whether a failed request may be replayed
/// (SPEC §8): whether the exchange took it from the pool (`reused`: it sat idle, and an upstream may close an idle
/// keep-alive connection just as a request goes out) and whether any response byte came for this one (`answered`: once one
/// has, the upstream may have acted on the request, and a second copy could run it twice).
///
/// ```
///   fresh ──lease──▶ leased ──park──▶ pooled ──lease──▶ leased …
///     │                │                 │
///     └──park──▶ pooled│   any byte while pooled, idle too long, closed
///                      ▼                 ▼
///                    closed ◀────────────┘
/// ```
///
/// ``UpstreamHandler`` performs what this decides; ``UpstreamPool`` keeps the pooled ones.
package struct UpstreamConnectionStateMachine {
    package enum State: Equatable {
        /// Connected for an exchange that may have gone by the time it connected.
        case fresh
        /// Used by one exchange.
        case leased(reused: Bool, answered: Bool)
        /// In the pool since then.
        case pooled(since: NIODeadline)
        case closed
    }

    /// What ``UpstreamHandler`` must do.
    package enum Action: Equatable {
        case none
        /// Close the connection.
        case close
        /// Its exchange must hear that it closed, with the facts that decide a replay.
        case tellExchange(reused: Bool, answered: Bool)
        /// The pool must forget it.
        case leavePool
    }

    package private(set) var state: State = .fresh

    /// An exchange takes the connection: whether it may (fresh or pooled).
    package mutating func lease() -> Bool {
        switch state {
        case .fresh:
            state = .leased(reused: false, answered: false)
            return true
        case .pooled:
            state = .leased(reused: true, answered: false)
            return true
        case .leased, .closed:
            return false
        }
    }

    /// Response bytes arrived.
    package mutating func responseBytes() -> Action {
        switch state {
        case .leased(let reused, _):
            state = .leased(reused: reused, answered: true)
            return .none
        case .fresh, .pooled:
            // Nobody asked: anything it sends now would be taken for the answer to the next request.
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// Its exchange is done with it (or it connected too late for one): whether it may wait in the pool.
    package mutating func park(now: NIODeadline) -> Bool {
        switch state {
        case .fresh, .leased:
            state = .pooled(since: now)
            return true
        case .pooled, .closed:
            return false
        }
    }

    /// The pool's sweep at `now`: whether it has been idle for `limit` and must close.
    package mutating func idleTooLong(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard case .pooled(let since) = state, now - since >= limit else { return false }
        state = .closed
        return true
    }

    /// The proxy closes it.
    package mutating func close() {
        state = .closed
    }

    /// The connection closed (either end, or an error).
    package mutating func closed() -> Action {
        defer { state = .closed }
        switch state {
        case .leased(let reused, let answered): return .tellExchange(reused: reused, answered: answered)
        case .pooled: return .leavePool
        case .fresh, .closed: return .none
        }
    }

    package init(state: State = .fresh) {
        self.state = state
    }
}
