import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

/// The life of a WebSocket tunnel (SPEC §8) as a value: events in, one action out. ``Tunnel`` holds the two ends and
/// performs the actions; every decision — half-close, idle limit, the end — is made here, so each one is tested without
/// a socket (`TunnelStateMachineTests`, with a sweep of every event sequence).
///
/// ```
///            FIN from A                      FIN from B
///   open ───────────────▶ halfClosed(B) ───────────────▶ closing ──▶ finished
///     │                         │                           ▲           ▲
///     │ idle / quiesce / error  │ idle / quiesce / error    │           │ both connections closed
///     └─────────────────────────┴───────────────────────────┘───────────┘
/// ```
///
/// - A FIN from one end stops the other end's output (TCP half-close, RFC 9293 §3.6): ``Action/finishSending(_:)``;
///   where that connection cannot half-close (TLS), it closes.
/// - A connection that closes takes the other with it; the tunnel is finished, and reported once, when both have.
/// - No byte either way for the idle limit closes both. Graceful shutdown closes both at once: a tunnel has no
///   exchange boundary to wait for, and WebSocket clients reconnect.
/// - An event that cannot happen in the state (a byte after the end, a second FIN from one end) closes both and is
///   counted (`bearer_proxy_state_errors_total{machine="tunnel"}`), never ignored.
struct TunnelStateMachine {
    enum Side: Sendable, Equatable, CaseIterable {
        case client
        case upstream

        var other: Side { self == .client ? .upstream : .client }
    }

    package enum State: Equatable {
        /// Bytes flow both ways.
        case open
        /// One end sent FIN; `sending` still sends.
        case halfClosed(sending: Side)
        /// Both connections are being closed.
        case closing
        /// Both connections closed, reported.
        case finished
    }

    /// What ``Tunnel`` must do.
    enum Action: Equatable {
        case none
        /// Stop `side`'s connection's output (shutdown write), keeping its input.
        case finishSending(Side)
        /// Close `side`'s connection.
        case close(Side)
        /// Close both connections.
        case closeBoth
        /// Check again for idleness at this time.
        case armIdleCheck(NIODeadline)
        /// Both connections are closed: report the tunnel (once) and stop the idle check.
        case report
    }

    package private(set) var state: State = .open
    /// The connections not yet closed.
    private(set) var openConnections: Set<Side> = [.client, .upstream]
    private(set) var bytesFromClient = 0
    private(set) var bytesFromUpstream = 0
    /// Events that could not happen in their state.
    private(set) var illegalEvents = 0
    private var lastActivity: NIODeadline
    let idleLimit: TimeAmount
    /// Whether an illegal event also stops a debug build (the product); the sweep tests feed illegal events on
    /// purpose.
    private let assertsOnIllegalEvents: Bool

    init(idleLimit: TimeAmount, now: NIODeadline, assertsOnIllegalEvents: Bool = true) {
        self.idleLimit = idleLimit
        self.lastActivity = now
        self.assertsOnIllegalEvents = assertsOnIllegalEvents
    }

    /// When the idle check should first run.
    var firstIdleCheck: NIODeadline { lastActivity + idleLimit }

    /// `count` bytes arrived from `side` (and went on to the other end).
    mutating func received(_ count: Int, from side: Side, now: NIODeadline) -> Action {
        switch state {
        case .open, .halfClosed(sending: side):
            switch side {
            case .client: bytesFromClient += count
            case .upstream: bytesFromUpstream += count
            }
            lastActivity = now
            return .none
        case .closing:
            // Bytes already read while the close was on its way: counted, nothing more.
            return .none
        case .halfClosed, .finished:
            return illegal()
        }
    }

    /// `side` sent FIN: it sends no more.
    mutating func inputClosed(_ side: Side) -> Action {
        switch state {
        case .open:
            state = .halfClosed(sending: side.other)
            return .finishSending(side.other)
        case .halfClosed(sending: side):
            // Both ends have finished sending: nothing more can cross.
            state = .closing
            return .closeBoth
        case .closing:
            return .none
        case .halfClosed, .finished:
            return illegal()
        }
    }

    /// `side`'s connection could not stop only its output (TLS cannot half-close): it closes instead.
    mutating func finishSendingFailed(_ side: Side) -> Action {
        switch state {
        case .finished: return .none
        default:
            state = .closing
            return .close(side)
        }
    }

    /// `side`'s connection closed.
    mutating func connectionClosed(_ side: Side) -> Action {
        guard openConnections.remove(side) != nil else { return illegal() }
        if openConnections.isEmpty {
            state = .finished
            return .report
        }
        state = .closing
        return .close(side.other)
    }

    /// The idle check ran at `now`.
    mutating func idleCheck(now: NIODeadline) -> Action {
        switch state {
        case .open, .halfClosed:
            guard now >= lastActivity + idleLimit else { return .armIdleCheck(lastActivity + idleLimit) }
            state = .closing
            return .closeBoth
        case .closing, .finished:
            return .none
        }
    }

    /// Graceful shutdown, or an error on either connection.
    mutating func closeNow() -> Action {
        switch state {
        case .open, .halfClosed:
            state = .closing
            return .closeBoth
        case .closing, .finished:
            return .none
        }
    }

    private mutating func illegal() -> Action {
        illegalEvents += 1
        if assertsOnIllegalEvents { assertionFailure("tunnel: an event that cannot happen in \(state)") }
        guard state != .finished else { return .none }
        state = .closing
        return .closeBoth
    }
}
