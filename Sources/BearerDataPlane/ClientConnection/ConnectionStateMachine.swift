import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// The life of a client connection, as a value (see ``ExchangeStateMachine`` for one exchange's): between
/// exchanges, one exchange at a time, a tunnel, lingering, closed. Requests are handled one at a time, in order: a
/// pipelined request that arrives early is queued and reading stops until the current exchange is done (RFC 9112
/// §9.3.2 — responses in request order). Doing this here instead of with NIO's `HTTPServerPipelineHandler` avoids two
/// `epoll_ctl` calls per request (data-plane pitfall 1).
///
/// It holds the exchange in progress and passes its events on; every event returns one ``Action``, which
/// ``ProxyConnectionHandler`` performs. What the connection knows of its reading — taken, ended after the last
/// request, a refusal waiting for its turn, stopped — is ``reading``, and nowhere else.
struct ConnectionStateMachine {
    package enum State {
        /// Between exchanges: the connection may stay idle until `idleDue`; once bytes of a request head have
        /// arrived, the head must be complete by `headDue`.
        case idle(idleDue: NIODeadline, headDue: NIODeadline?)
        /// An exchange is in progress: ``ConnectionStateMachine/exchange`` holds it.
        case busy
        /// The connection became one end of a WebSocket ``Tunnel``; the handler has left its pipeline.
        case tunnelled
        /// The last answer is written and the sending side shut: what the client still sends is read and dropped
        /// until it closes, for at most the linger limit (``ProxyConnectionHandler/closeLingering(after:)``).
        case lingering
        /// Closed, or closing: nothing more is read or answered.
        case closed
    }

    /// How far the client's bytes are still read as requests.
    enum Reading: Equatable {
        /// Requests are read and taken.
        case open
        /// The connection's last request has arrived — one that does not keep the connection (`Connection: close`,
        /// HTTP/1.0 without keep-alive, an upgrade), one whose answer only the close can end (HTTP/1.0 and no
        /// length), or one refused for its head — so nothing after it is taken: its bytes are decoded and dropped,
        /// and a malformed message among them is no one's (RFC 9112 §9.6: a client that sends `close` sends no
        /// further requests; §9.3.2: whatever follows is not a request the server took).
        case ended
        /// A pipelined request after the one in progress could not be read: it is answered in its own slot, once
        /// every request before it has had its answer (RFC 9112 §9.3.2), and the connection then closes. The
        /// decoder reads nothing after a malformed message, so nothing follows it in ``queued``; what was queued of
        /// the failed request itself (a valid head before a malformed body) is dropped, so no part of it reaches an
        /// upstream.
        case refusalWaiting(Refusal)
        /// Nothing more is decoded: the decoder refused the bytes, the client left, or the connection lingers.
        case stopped
    }

    /// The answer to a request that could not be read, and the reason the access log gives for it.
    struct Refusal: Equatable {
        var problem: ProxyError
        package var label: String?
    }

    /// Whether the server is shutting down gracefully (finish the exchange in progress, then close).
    enum Mode: Equatable {
        case serving
        case quiescing
    }

    /// What the handler does after an event: every event returns one.
    enum Action: Equatable {
        case none
        /// Perform the exchange's action (``ExchangeStateMachine/Action``).
        case exchange(ExchangeStateMachine.Action)
        /// The upstream's response head was taken (``responseHead(_:endsWithConnection:verdict:)``): first let the
        /// route's token source hear `token`, before anything `action` writes lets a pipelined request use that
        /// token, then perform `action`. `stepUpAnswered`: a step-up the route needs is answered with the problem
        /// now, not waited for (counted).
        case responseHead(ExchangeStateMachine.Action, token: TokenVerdict.TokenEffect, stepUpAnswered: Bool)
        /// Hand this request part on: a head begins an exchange (the handler's routing step), a body part or the end
        /// goes to the exchange in progress.
        case deliver(ClientRequestPart)
        /// A request that could not be read is answered: `action` is the exchange's answer (an exchange is begun for
        /// it when there was none); `refusal` the access log's reason.
        case refuse(ExchangeStateMachine.Action, refusal: String?)
        /// Close the client connection.
        case close(Closing)
    }

    /// Why, and when, the client connection closes.
    enum Closing: Equatable {
        /// Once the last answer is written, lingering (``State/lingering``).
        case afterResponse
        /// Now: idle past its limit (RFC 9112 §9.3: either side may close an idle persistent connection).
        case idle
        /// Now: the server shuts down, and nothing is in progress.
        case quiescing
        /// Now: the listener is at its connection cap, and this connection is an idle keep-alive one.
        case roomWanted
        /// Now: the client's bytes cannot be read, nor answered (more held than the decoder's limit).
        case unreadable
        /// Now: an event that cannot happen in its state (counted in ``illegalEvents``).
        case illegalEvent
    }

    /// The connection's own limits (SPEC §8).
    struct Limits {
        var idle: TimeAmount
        package var requestHead: TimeAmount
        package var bodyStall: TimeAmount

        init(idle: TimeAmount, requestHead: TimeAmount, bodyStall: TimeAmount) {
            self.idle = idle
            self.requestHead = requestHead
            self.bodyStall = bodyStall
        }
    }

    let limits: Limits
    package private(set) var state: State
    private(set) var mode = Mode.serving
    private(set) var reading = Reading.open
    /// Parts of pipelined requests that arrived while an exchange was in progress.
    private(set) var queued = CircularBuffer<ClientRequestPart>()
    private var exchanges: UInt64 = 0
    /// The exchange in progress: set exactly while the state is `.busy`. It sits beside the state rather than in
    /// `.busy`'s payload so that events change it in place: a payload is moved out of the enum and back for every
    /// event, with a retain and a release of each buffer it holds — about 1–2 µs per request (docs/benchmarks.md).
    private(set) var exchange: ExchangeStateMachine?
    /// Events that could not happen in the state they arrived in (the exchange's own are counted by it).
    private(set) var illegalEvents = 0
    private let assertsOnIllegalEvents: Bool

    init(limits: Limits, now: NIODeadline, assertsOnIllegalEvents: Bool = true) {
        self.limits = limits
        self.assertsOnIllegalEvents = assertsOnIllegalEvents
        self.state = .idle(idleDue: now + limits.idle, headDue: nil)
    }

    /// The connection starts at `now`, before its first event: its idle limit runs from then. The handler is built
    /// before its loop's clock is at hand; starting the machine again would cost an HTTP/2 stream an allocation.
    mutating func started(now: NIODeadline) {
        guard case .idle(_, nil) = state, exchanges == 0 else { return illegal("started") }
        state = .idle(idleDue: now + limits.idle, headDue: nil)
    }

    /// Whether the client's bytes are still decoded (taken, or dropped after the last request).
    var decodes: Bool {
        switch reading {
        case .open, .ended: true
        case .refusalWaiting, .stopped: false
        }
    }

    var isLingering: Bool {
        if case .lingering = state { return true }
        return false
    }

    /// Applies `event` to the exchange in progress and returns its action — `orElse` when there is none (a result
    /// that arrives after its exchange ended). After a request that does not keep the connection has ended, reading
    /// ends (``Reading/ended``): nothing after it is a request this connection will serve. An action that ends the
    /// exchange leaves with the connection's decision in it (``exchangeEnded(close:now:)``); `now` is asked only
    /// when the connection then waits for another request.
    mutating func exchangeEvent(
        orElse none: ExchangeStateMachine.Action = .none, now: @autoclosure () -> NIODeadline,
        _ event: (inout ExchangeStateMachine) -> ExchangeStateMachine.Action
    ) -> Action {
        .exchange(step(orElse: none, now: now(), event))
    }

    private mutating func step(
        orElse none: ExchangeStateMachine.Action = .none, now: @autoclosure () -> NIODeadline,
        _ event: (inout ExchangeStateMachine) -> ExchangeStateMachine.Action
    ) -> ExchangeStateMachine.Action {
        guard exchange != nil else { return none }
        let action = event(&exchange!)
        if case .open = reading, exchange!.persistence == .close, exchange!.requestHasEnded { endReading() }
        guard let close = action.endsExchange else { return action }
        return action.ending(close: exchangeEnded(close: close, now: now()))
    }

    /// The exchange in progress is over once the handler has performed the action that ends it; `close` whether
    /// it wants the connection closed. The connection decides, and says so in that action: it closes — once that
    /// answer is written, lingering — when the exchange or a graceful shutdown wants it (nothing queued is
    /// started then), or it waits for the next request from `now`, taking what is queued
    /// (``nextQueued(now:)``).
    private mutating func exchangeEnded(close: Bool, now: @autoclosure () -> NIODeadline) -> Bool {
        exchange = nil
        if close || mode == .quiescing {
            dropQueued()
            state = .closed
            return true
        }
        state = .idle(idleDue: now() + limits.idle, headDue: nil)
        return false
    }

    /// The upstream's response head, and what it says of the route's token (``TokenVerdict``): the exchange decides
    /// what becomes of the answer, and the token's effect goes with its action — only for a head the exchange took.
    mutating func responseHead(
        _ head: UpstreamResponse, endsWithConnection: Bool, verdict: TokenVerdict, now: @autoclosure () -> NIODeadline
    ) -> Action {
        let action = step(now: now()) {
            $0.responseHead(head, endsWithConnection: endsWithConnection, verdict: verdict)
        }
        if case .abort = action { return .exchange(action) }
        // Answered with the problem now; a step-up waited for is counted when its sign-in ends.
        let stepUpAnswered = verdict.stepUp != nil && exchange?.awaitsStepUp != true
        if verdict.tokenEffect == .none && !stepUpAnswered { return .exchange(action) }
        return .responseHead(action, token: verdict.tokenEffect, stepUpAnswered: stepUpAnswered)
    }

    // MARK: Reading

    /// A request part the decoder read: delivered, queued until the exchange in progress is done, or dropped. The
    /// part moves into the action rather than being copied.
    mutating func received(_ part: consuming ClientRequestPart) -> Action {
        guard case .open = reading else { return .none }
        switch state {
        case .closed, .tunnelled, .lingering:
            return .none
        case .idle(let idleDue, _):
            if case .head = part { state = .idle(idleDue: idleDue, headDue: nil) }
            if !queued.isEmpty {
                queued.append(part)
                return .none
            }
            return .deliver(part)
        case .busy:
            if !queued.isEmpty || part.isHead {
                queued.append(part)
                return .none
            }
            return .deliver(part)
        }
    }

    /// A read completed; `deliveredPart` whether the decoder made a request part of its bytes. Bytes that made none
    /// between exchanges are the start of a request head: it must be complete within the head limit.
    /// `now` is asked only then.
    mutating func readComplete(deliveredPart: Bool, now: @autoclosure () -> NIODeadline) {
        guard !deliveredPart, queued.isEmpty, case .idle(let idleDue, nil) = state else { return }
        state = .idle(idleDue: idleDue, headDue: now() + limits.requestHead)
    }

    /// Whether to let the client's next `read()` through. `upstreamWritable` is asked only when the exchange's
    /// state depends on it: asking a channel costs a pipeline lookup and an atomic load, on every read.
    func wantsRead(upstreamWritable: @autoclosure () -> Bool) -> Bool {
        guard queued.isEmpty else { return false }
        switch state {
        case .busy: return exchange?.wantsRead(upstreamWritable: upstreamWritable()) ?? true
        case .idle, .tunnelled, .lingering, .closed: return true
        }
    }

    /// The decoder could not read the client's bytes, and reads nothing more. `refusal` answers the message (nil:
    /// it cannot be answered, and the connection closes): now if it is the request in progress or the next one
    /// with nothing before it, in its turn if it is a later pipelined one, never if it came after the connection's
    /// last request.
    mutating func decoderFailed(_ refusal: Refusal?, now: NIODeadline) -> Action {
        guard let refusal else {
            reading = .stopped
            return .close(.unreadable)
        }
        switch reading {
        case .open:
            break
        case .ended:
            reading = .stopped
            return .none
        case .refusalWaiting, .stopped:
            return .none
        }
        if let last = queued.last {
            // Queued parts belong to later requests, none of which has begun. Unless the last one is complete, the
            // failure is in its body: its parts go, and the failure takes its slot.
            if !last.isEnd {
                while let part = queued.popLast(), !part.isHead {}
            }
        } else if exchange == nil || exchange?.state.bodyDue != nil {
            // The next request with nothing before it, or the body of the one in progress.
            let action = readFailed(refusal.problem, refusal: refusal.label, now: now)
            reading = .stopped
            return action
        }
        reading = .refusalWaiting(refusal)
        return .none
    }

    // MARK: Exchanges

    /// A request head is delivered: its exchange begins. A head while one is in progress is an illegal event
    /// (counted): the decoder's heads are delivered only between exchanges (a later one is queued).
    @discardableResult
    mutating func begin(_ request: ExchangeStateMachine.Request, now: NIODeadline) -> Action {
        guard case .idle = state else {
            illegal("a request head")
            return .close(.illegalEvent)
        }
        exchanges += 1
        var exchange = ExchangeStateMachine(
            serial: exchanges, request: request, now: now, bodyStall: limits.bodyStall,
            assertsOnIllegalEvents: assertsOnIllegalEvents)
        if mode == .quiescing { _ = exchange.quiesce() }
        self.exchange = exchange
        state = .busy
        return .none
    }

    private mutating func illegal(_ event: StaticString) {
        illegalEvents += 1
        if assertsOnIllegalEvents { assertionFailure("connection: \(event) cannot happen in \(state)") }
    }

    /// Nothing after the request in progress is taken: what is queued is dropped, and so is a later request's
    /// refusal (the decoder stays stopped then).
    private mutating func endReading() {
        switch reading {
        case .open: reading = .ended
        case .refusalWaiting: reading = .stopped
        case .ended, .stopped: break
        }
        dropQueued()
    }

    /// Drops what is queued. An empty queue is left as it is: emptying one allocates its storage again, and an HTTP/2
    /// stream, which never queues, would pay that on every close.
    private mutating func dropQueued() {
        if !queued.isEmpty { queued.removeAll() }
    }

    /// What is queued, one step at a time, once an exchange has ended: a part to deliver (a new request waits for
    /// the exchange before it), or — once every request before it has been answered — the refusal of a later
    /// pipelined request; `.none` when there is nothing to take now.
    mutating func nextQueued(now: NIODeadline) -> Action {
        if let part = queued.first {
            switch state {
            case .busy where part.isHead: return .none
            case .closed, .tunnelled, .lingering: return .none
            case .idle, .busy:
                queued.removeFirst()
                return .deliver(part)
            }
        }
        guard case .idle = state, case .refusalWaiting(let refusal) = reading else { return .none }
        return readFailed(refusal.problem, refusal: refusal.label, now: now)
    }

    /// The request could not be read (an invalid message, a head that did not arrive in time): answer `problem` for
    /// it — or for the head still arriving — then close. Begins an exchange to answer when there is none; when the
    /// connection is closing already, there is nothing to answer and it closes.
    mutating func readFailed(_ problem: ProxyError, refusal: String? = nil, now: NIODeadline) -> Action {
        endReading()
        if case .idle = state {
            begin(ExchangeStateMachine.Request(method: .GET), now: now)
        }
        guard exchange != nil else { return .exchange(.closeConnection(closeUpstream: true)) }
        return .refuse(step(now: now) { $0.readFailed(problem) }, refusal: refusal)
    }

    /// The exchange became a WebSocket tunnel; the handler leaves the pipeline.
    mutating func tunnel() {
        dropQueued()
        exchange = nil
        state = .tunnelled
    }

    // MARK: Ending

    /// The listener is at its connection cap and wants room: an idle keep-alive connection — one that has served a
    /// request and holds no exchange and no byte of a next one — closes (RFC 9112 §9.3: either side may close an
    /// idle persistent connection), as nginx closes its reusable connections when it runs out. A connection still
    /// waiting for its first request is left alone: it may be the very client the room is for.
    mutating func closeIfIdle() -> Action {
        guard exchanges > 0, case .idle(_, nil) = state, queued.isEmpty, exchange == nil, reading == .open
        else { return .none }
        state = .closed
        return .close(.roomWanted)
    }

    /// Graceful shutdown: an idle connection closes now, a busy one once its exchange is over.
    mutating func quiesce(now: @autoclosure () -> NIODeadline) -> Action {
        mode = .quiescing
        switch state {
        case .idle:
            state = .closed
            return .close(.quiescing)
        case .busy:
            _ = step(now: now()) { $0.quiesce() }
            return .none
        case .tunnelled, .lingering, .closed:
            return .none
        }
    }

    /// The last answer is written and the sending side shut: what the client still sends is dropped unread.
    mutating func linger() {
        dropQueued()
        reading = .stopped
        state = .lingering
    }

    /// The client connection closed. Returns what becomes of the exchange in progress
    /// (``ExchangeStateMachine/Action/abandon(closeUpstream:responseEnded:)``), `.none` when there was none.
    mutating func clientClosed() -> Action {
        dropQueued()
        reading = .stopped
        if case .tunnelled = state { return .none }
        let action = exchange == nil ? .none : exchange!.clientClosed()
        exchange = nil
        state = .closed
        return .exchange(action)
    }

    // MARK: Time limits

    /// The earliest deadline that applies.
    var nextDeadline: NIODeadline? {
        switch state {
        case .idle(let idleDue, let headDue):
            guard queued.isEmpty else { return nil }
            return ExchangeStateMachine.earliest(idleDue, headDue)
        case .busy: return exchange?.nextDeadline
        case .tunnelled, .lingering, .closed: return nil
        }
    }

    /// The timer fired: the exchange's deadlines, or between exchanges the head limit — `408`, then close (RFC 9110
    /// §15.5.9) — and the idle limit. `readsWithheld`: the client's reads are held back (the exchange's body-stall
    /// limit does not run then).
    mutating func deadlinesDue(now: NIODeadline, readsWithheld: Bool) -> Action {
        if exchange != nil {
            return exchangeEvent(now: now) { $0.deadlinesDue(now: now, readsWithheld: readsWithheld) }
        }
        guard case .idle(let idleDue, let headDue) = state, queued.isEmpty else { return .none }
        if let headDue, headDue <= now {
            let seconds = limits.requestHead.nanoseconds / 1_000_000_000
            return readFailed(.requestTimeout(detail: "The request head did not arrive within \(seconds) s."), now: now)
        }
        if idleDue <= now {
            state = .closed
            return .close(.idle)
        }
        return .none
    }
}
