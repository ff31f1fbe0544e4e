import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// The life of a client connection, as a value (see ``ExchangeStateMachine`` for one exchange's): between
/// exchanges, one exchange at a time, a tunnel, closed. Requests are handled one at a time, in order: a pipelined
/// request that arrives early is queued and reading stops until the current exchange is done (RFC 9112 §9.3.2 —
/// responses in request order). Doing this here instead of with NIO's `HTTPServerPipelineHandler` avoids two
/// `epoll_ctl` calls per request (data-plane pitfall 1).
package struct ConnectionStateMachine {
    package enum State {
        /// Between exchanges: the connection may stay idle until `idleDue`; once bytes of a request head have
        /// arrived, the head must be complete by `headDue`.
        case idle(idleDue: NIODeadline, headDue: NIODeadline?)
        /// An exchange is in progress: ``ConnectionStateMachine/exchange`` holds it.
        case busy
        /// The connection became one end of a WebSocket ``Tunnel``; the handler has left its pipeline.
        case tunnelled
        /// Closed, or closing: nothing more is read or answered.
        case closed
    }

    /// Whether the server is shutting down gracefully (finish the exchange in progress, then close).
    package enum Mode: Equatable {
        case serving
        case quiescing
    }

    /// The connection's own limits (SPEC §8).
    package struct Limits {
        package var idle: TimeAmount
        package var requestHead: TimeAmount
        package var bodyStall: TimeAmount

        package init(idle: TimeAmount, requestHead: TimeAmount, bodyStall: TimeAmount) {
            self.idle = idle
            self.requestHead = requestHead
            self.bodyStall = bodyStall
        }
    }

    package let limits: Limits
    package private(set) var state: State
    package private(set) var mode = Mode.serving
    /// Parts of pipelined requests that arrived while an exchange was in progress.
    package private(set) var queued = CircularBuffer<ClientRequestPart>()
    /// The connection's last request has arrived — one that does not keep the connection (`Connection: close`,
    /// HTTP/1.0 without keep-alive, an upgrade), or one refused for its head — so nothing after it is read: its
    /// bytes are dropped unparsed, and a malformed message among them is no one's (RFC 9112 §9.6: a client that
    /// sends `close` sends no further requests; §9.3.2: whatever follows is not a request the server took).
    package private(set) var readingEnded = false
    /// A pipelined request after the one in progress could not be parsed: it is answered in its own slot, once
    /// every request before it has had its answer (RFC 9112 §9.3.2), and the connection then closes. The parser
    /// reads nothing after a malformed message, so nothing follows it in ``queued``; what was queued of the failed
    /// request itself (a valid head before a malformed body) is dropped, so no part of it reaches an upstream.
    private var deferredFailure: ProxyError?
    private var exchanges: UInt64 = 0
    /// The exchange in progress: set exactly while the state is `.busy`. It sits beside the state rather than in
    /// `.busy`'s payload so that events change it in place: a payload is moved out of the enum and back for every
    /// event, with a retain and a release of each buffer it holds — about 1–2 µs per request, measured
    /// (docs/benchmarks.md, session 6).
    package private(set) var exchange: ExchangeStateMachine?
    /// Events that could not happen in the state they arrived in (the exchange's own are counted by it).
    package private(set) var illegalEvents = 0
    private let assertsOnIllegalEvents: Bool

    package init(limits: Limits, now: NIODeadline, assertsOnIllegalEvents: Bool = true) {
        self.limits = limits
        self.assertsOnIllegalEvents = assertsOnIllegalEvents
        self.state = .idle(idleDue: now + limits.idle, headDue: nil)
    }

    /// Applies `event` to the exchange in progress and returns its action — `orElse` when there is none (a result
    /// that arrives after its exchange ended). After a request that does not keep the connection has ended, reading
    /// ends (``readingEnded``): nothing after it is a request this connection will serve.
    package mutating func exchangeEvent(
        orElse none: ExchangeStateMachine.Action = .none,
        _ event: (inout ExchangeStateMachine) -> ExchangeStateMachine.Action
    ) -> ExchangeStateMachine.Action {
        guard exchange != nil else { return none }
        let action = event(&exchange!)
        if !readingEnded, exchange!.persistence == .close, exchange!.requestHasEnded { endReading() }
        return action
    }

    // MARK: Reading

    /// What to do with a request part the parser delivered.
    package enum Delivery: Equatable {
        /// Hand it to the exchange (or begin one with it).
        case deliver
        /// Keep it until the exchange in progress is done.
        case queue
        /// Drop it: the connection is closing.
        case drop
    }

    package mutating func received(_ part: ClientRequestPart) -> Delivery {
        if readingEnded { return .drop }
        switch state {
        case .closed, .tunnelled:
            return .drop
        case .idle(let idleDue, _):
            if case .head = part { state = .idle(idleDue: idleDue, headDue: nil) }
            if !queued.isEmpty {
                queued.append(part)
                return .queue
            }
            return .deliver
        case .busy:
            if !queued.isEmpty || part.isHead {
                queued.append(part)
                return .queue
            }
            return .deliver
        }
    }

    /// A read completed; `deliveredPart` whether the parser made a request part of its bytes. Bytes that made none
    /// between exchanges are the start of a request head: it must be complete within the head limit.
    /// `now` is asked only then.
    package mutating func readComplete(deliveredPart: Bool, now: @autoclosure () -> NIODeadline) {
        guard !deliveredPart, queued.isEmpty, case .idle(let idleDue, nil) = state else { return }
        state = .idle(idleDue: idleDue, headDue: now() + limits.requestHead)
    }

    /// Whether to let the client's next `read()` through. `upstreamWritable` is asked only when the exchange's
    /// state depends on it: asking a channel costs a pipeline lookup and an atomic load, on every read.
    package func wantsRead(upstreamWritable: @autoclosure () -> Bool) -> Bool {
        guard queued.isEmpty else { return false }
        switch state {
        case .busy: return exchange?.wantsRead(upstreamWritable: upstreamWritable()) ?? true
        case .idle, .tunnelled, .closed: return true
        }
    }

    // MARK: Exchanges

    /// A request head is delivered: its exchange begins. Returns false (and counts an illegal event) when one is in
    /// progress already: the parser delivers a head only between exchanges (a later one is queued).
    @discardableResult
    package mutating func begin(_ request: ExchangeStateMachine.Request, now: NIODeadline) -> Bool {
        guard case .idle = state else {
            illegal("a request head")
            return false
        }
        exchanges += 1
        var exchange = ExchangeStateMachine(
            serial: exchanges, request: request, now: now, bodyStall: limits.bodyStall,
            assertsOnIllegalEvents: assertsOnIllegalEvents)
        if mode == .quiescing { _ = exchange.quiesce() }
        self.exchange = exchange
        state = .busy
        return true
    }

    private mutating func illegal(_ event: StaticString) {
        illegalEvents += 1
        if assertsOnIllegalEvents { assertionFailure("connection: \(event) cannot happen in \(state)") }
    }

    /// What follows a finished exchange.
    package enum Next: Equatable {
        /// Close the connection (once the response is written).
        case close
        /// Wait for the next request: deliver the queued parts (``nextQueuedPart()``).
        case awaitRequest
    }

    /// Nothing more is read from this connection: what is queued is dropped, and so is a later request's failure.
    private mutating func endReading() {
        readingEnded = true
        queued.removeAll()
        deferredFailure = nil
    }

    /// How to treat a message the parser could not read.
    package enum ParseFailure: Equatable {
        /// It came after the connection's last request: it is nobody's request, and the connection is closing.
        case ignore
        /// It is a later pipelined request: kept for its slot (``takeDeferredFailure()``).
        case deferred
        /// It is the request in progress, or the next one with nothing before it: answer it now, then close.
        case answerNow
    }

    /// The parser could not read a message, which `problem` answers.
    package mutating func parseFailed(_ problem: ProxyError) -> ParseFailure {
        if readingEnded { return .ignore }
        if let last = queued.last {
            // Queued parts belong to later requests, none of which has begun. Unless the last one is complete, the
            // failure is in its body: its parts go, and the failure takes its slot.
            if !last.isEnd {
                while let part = queued.popLast(), !part.isHead {}
            }
        } else if exchange == nil || exchange?.state.bodyDue != nil {
            // The next request with nothing before it, or the body of the one in progress.
            return .answerNow
        }
        deferredFailure = problem
        return .deferred
    }

    /// The failure of a later pipelined request, once it is its turn — every request before it has been answered —
    /// to be answered, after which the connection closes.
    package mutating func takeDeferredFailure() -> ProxyError? {
        guard case .idle = state, queued.isEmpty, !readingEnded, let failure = deferredFailure else { return nil }
        deferredFailure = nil
        return failure
    }

    /// The exchange in progress is over; `close` whether it wants the connection closed.
    package mutating func exchangeFinished(close: Bool, now: NIODeadline) -> Next {
        guard case .busy = state else {
            illegal("an exchange's end")
            state = .closed
            return .close
        }
        exchange = nil
        if close || mode == .quiescing {
            queued.removeAll()
            state = .closed
            return .close
        }
        state = .idle(idleDue: now + limits.idle, headDue: nil)
        return .awaitRequest
    }

    /// The next queued part to deliver: all of them, except that a new request waits for the exchange before it.
    package mutating func nextQueuedPart() -> ClientRequestPart? {
        guard let part = queued.first else { return nil }
        switch state {
        case .busy where part.isHead: return nil
        case .closed, .tunnelled: return nil
        case .idle, .busy:
            queued.removeFirst()
            return part
        }
    }

    /// The request could not be read (an invalid message, a head that did not arrive in time): answer `problem` for
    /// it — or for the head still arriving — then close. Begins an exchange to answer when there is none; when the
    /// connection is closing already, there is nothing to answer and it closes.
    package mutating func readFailed(_ problem: ProxyError, now: NIODeadline) -> ExchangeStateMachine.Action {
        endReading()
        if case .idle = state {
            begin(ExchangeStateMachine.Request(method: .GET), now: now)
        }
        return exchangeEvent(orElse: .closeConnection(closeUpstream: true)) { $0.readFailed(problem) }
    }

    /// The exchange became a WebSocket tunnel; the handler leaves the pipeline.
    package mutating func tunnel() {
        queued.removeAll()
        exchange = nil
        state = .tunnelled
    }

    // MARK: Ending

    /// The listener is at its connection cap and wants room: an idle keep-alive connection — one that has served a
    /// request and holds no exchange and no byte of a next one — closes (RFC 9112 §9.3: either side may close an
    /// idle persistent connection), as nginx closes its reusable connections when it runs out. A connection still
    /// waiting for its first request is left alone: it may be the very client the room is for. Returns whether to
    /// close now.
    package mutating func closeIfIdle() -> Bool {
        guard exchanges > 0, case .idle(_, nil) = state, queued.isEmpty, exchange == nil, deferredFailure == nil
        else { return false }
        state = .closed
        return true
    }

    /// Graceful shutdown. Returns whether to close now (no exchange in progress).
    package mutating func quiesce() -> Bool {
        mode = .quiescing
        switch state {
        case .idle:
            state = .closed
            return true
        case .busy:
            _ = exchangeEvent { $0.quiesce() }
            return false
        case .tunnelled, .closed:
            return false
        }
    }

    /// The client connection closed. Returns what becomes of the exchange in progress
    /// (``ExchangeStateMachine/Action/abandon(closeUpstream:responseEnded:)``), `.none` when there was none.
    package mutating func clientClosed() -> ExchangeStateMachine.Action {
        queued.removeAll()
        if case .tunnelled = state { return .none }
        let action = exchange == nil ? .none : exchange!.clientClosed()
        exchange = nil
        state = .closed
        return action
    }

    // MARK: Time limits

    /// The earliest deadline that applies.
    package var nextDeadline: NIODeadline? {
        switch state {
        case .idle(let idleDue, let headDue):
            guard queued.isEmpty else { return nil }
            return ExchangeStateMachine.earliest(idleDue, headDue)
        case .busy: return exchange?.nextDeadline
        case .tunnelled, .closed: return nil
        }
    }

    /// What a deadline between exchanges calls for.
    package enum IdleTimeout: Equatable {
        case none
        /// A request head did not arrive in full within its limit: `408`, then close (RFC 9110 §15.5.9).
        case requestHeadTimedOut
        /// RFC 9112 §9.3: either side may close an idle persistent connection; nothing is in flight.
        case closeIdle
    }

    /// The timer fired between exchanges.
    package mutating func idleDeadlinesDue(now: NIODeadline) -> IdleTimeout {
        guard case .idle(let idleDue, let headDue) = state, queued.isEmpty else { return .none }
        if let headDue, headDue <= now { return .requestHeadTimedOut }
        if idleDue <= now {
            state = .closed
            return .closeIdle
        }
        return .none
    }
}
