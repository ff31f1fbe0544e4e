import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// The life of one upstream connection: made for an exchange, leased to one exchange at a time, idle in its loop's pool
/// between them, closed. It owns the two facts that decide whether a failed request may be replayed (SPEC §8): whether
/// the exchange took it from the pool (`reused`: it sat idle, and an upstream may close an idle keep-alive connection
/// just as a request goes out) and whether any response byte came for this one (`answered`: once one has, the upstream
/// may have acted on the request, and a second copy could run it twice).
///
/// ```
///   fresh ──lease──▶ leased ──park──▶ pooled ──lease──▶ leased …
///     │                │  ╲              │
///     └──park──▶ pooled│   release ──▶ releasing ──read completes, nothing after the answer──▶ pooled
///                      │   (in a read)   │
///                      ▼                 ▼ any byte while pooled or releasing, idle too long, closed
///                    closed ◀────────────┘
/// ```
///
/// An exchange lets go of its connection when the response's end is read — inside the read that brought it, where
/// the upstream's next bytes may still follow, in the same read or in another one of the same batch. Bytes nobody
/// asked for would be taken for the next request's answer (response-queue poisoning), so they end the connection;
/// one whose read may be followed by another (``UpstreamHandler``: in the clear, a read that filled its buffer) is
/// `releasing` — taken by nobody — until the reads complete with nothing after the answer to the last request.
///
/// ``UpstreamHandler`` performs what this decides; ``UpstreamPool`` keeps the pooled ones.
struct UpstreamConnectionStateMachine {
    package enum State: Equatable {
        /// Connected for an exchange that may have gone by the time it connected.
        case fresh
        /// Used by one exchange.
        case leased(reused: Bool, answered: Bool)
        /// Its exchange let go of it at `since`, inside a read of the upstream's bytes: it joins the pool when that
        /// read completes, if nothing came after the answer.
        case releasing(since: NIODeadline)
        /// In the pool since then.
        case pooled(since: NIODeadline)
        case closed
    }

    /// What ``UpstreamHandler`` must do.
    enum Action: Equatable {
        case none
        /// Close the connection.
        case close
        /// Its exchange must hear that it closed, with the facts that decide a replay.
        case tellExchange(reused: Bool, answered: Bool)
        /// The pool must forget it.
        case leavePool
        /// The read it was released in has completed with nothing after the answer: it joins the pool, idle since
        /// `since`.
        case joinPool(since: NIODeadline)
    }

    package private(set) var state: State = .fresh

    /// An exchange takes the connection: whether it may (fresh or pooled).
    mutating func lease() -> Bool {
        switch state {
        case .fresh:
            state = .leased(reused: false, answered: false)
            return true
        case .pooled:
            state = .leased(reused: true, answered: false)
            return true
        case .leased, .releasing, .closed:
            return false
        }
    }

    /// Response bytes arrived.
    mutating func responseBytes() -> Action {
        switch state {
        case .leased(let reused, _):
            state = .leased(reused: reused, answered: true)
            return .none
        case .fresh, .releasing, .pooled:
            // Nobody asked: anything it sends now would be taken for the answer to the next request.
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// Its exchange is done with it (or it connected too late for one, or the read it was released in completed):
    /// whether it may wait in the pool.
    mutating func park(now: NIODeadline) -> Bool {
        switch state {
        case .fresh, .leased, .releasing:
            state = .pooled(since: now)
            return true
        case .pooled, .closed:
            return false
        }
    }

    /// Its exchange is done with it at `now`, inside a read of the upstream's bytes: whether it may join the pool
    /// when the read completes.
    package mutating func release(now: NIODeadline) -> Bool {
        guard case .leased = state else { return false }
        state = .releasing(since: now)
        return true
    }

    /// A read of the upstream's bytes completed. `overran`: bytes came after the answer to the last request sent
    /// on it, or may still be waiting in the socket (the read filled its buffer) — an upstream that says what
    /// nobody asked for is never used again (RFC 9112 §9.3.2: responses answer requests in order, one each).
    mutating func readCompleted(overran: Bool) -> Action {
        guard case .releasing(let since) = state else { return .none }
        if overran {
            state = .closed
            return .close
        }
        return .joinPool(since: since)
    }

    /// The pool's sweep at `now`: whether it has been idle for `limit` and must close.
    mutating func idleTooLong(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard case .pooled(let since) = state, now - since >= limit else { return false }
        state = .closed
        return true
    }

    /// The proxy closes it.
    mutating func close() {
        state = .closed
    }

    /// The connection closed (either end, or an error).
    mutating func closed() -> Action {
        defer { state = .closed }
        switch state {
        case .leased(let reused, let answered): return .tellExchange(reused: reused, answered: answered)
        case .pooled: return .leavePool
        case .fresh, .releasing, .closed: return .none
        }
    }

    init(state: State = .fresh) {
        self.state = state
    }
}
