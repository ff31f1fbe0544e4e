import NIOCore
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane
@testable import BearerHTTP

/// The client connection's machine: docs/architecture.md's table of its transitions is the machine's
/// own, found by trying every event in every state reachable from a new connection (``TransitionTable``). The
/// exchange in progress is shown only as far as the connection sees it (none, or one whose request has or has not
/// ended); its own transitions are ``ExchangeDiagramTests``'. A body part is delivered, queued or dropped exactly as
/// the request's end is, so only the end is shown; rows from the two ends, closed and tunnelled, are left out.
@Suite("The connection's transition table in docs/architecture.md matches the code")
struct ConnectionDiagramTests {
    typealias Machine = ConnectionStateMachine
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let limits = Machine.Limits(idle: .seconds(75), requestHead: .seconds(10), bodyStall: .seconds(60))

    static func name(_ machine: Machine) -> String {
        var parts: [String]
        switch machine.state {
        case .idle(_, let headDue): parts = [headDue == nil ? "idle" : "idle, a head arriving"]
        case .busy:
            let ended = machine.exchange?.requestHasEnded ?? false
            parts = [ended ? "busy, request ended" : "busy, request streaming"]
        case .tunnelled: parts = ["tunnelled"]
        case .lingering: parts = ["lingering"]
        case .closed: parts = ["closed"]
        }
        if !machine.queued.isEmpty { parts.append("a request queued") }
        switch machine.reading {
        case .open: break
        case .ended: parts.append("reading ended")
        case .refusalWaiting: parts.append("a refusal waiting")
        case .stopped: parts.append("reading stopped")
        }
        if machine.mode == .quiescing { parts.append("quiescing") }
        return parts.joined(separator: ", ")
    }

    static var events: [(String, (inout Machine) -> String)] {
        let later = start + .hours(1)
        let head = ClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/"))
        var closing = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/")
        closing.headers.add(name: "connection", value: "close")
        func delivery(_ machine: inout Machine, _ part: ClientRequestPart) -> String {
            let queued = machine.queued.count
            switch machine.received(part) {
            case .deliver: return "deliver"
            default: return machine.queued.count > queued ? "queue it" : "drop it"
            }
        }
        func action(_ action: Machine.Action) -> String {
            switch action {
            case .none, .exchange(.none): "—"
            case .exchange(.answer), .refuse(.answer, _): "answer"
            case .exchange(.closeConnection), .refuse(.closeConnection, _), .close: "close"
            default: "the exchange's action"
            }
        }
        return [
            (
                "a head, delivered",
                { machine in
                    let result = delivery(&machine, head)
                    guard result == "deliver" else { return result }
                    return machine.begin(.init(method: .POST), now: start) == .none
                        ? "begin an exchange" : "illegal: counted"
                }
            ),
            (
                "a Connection: close head, delivered",
                { machine in
                    let result = delivery(&machine, .head(closing))
                    guard result == "deliver" else { return result }
                    return machine.begin(.init(method: .POST, keepAlive: false), now: start) == .none
                        ? "begin an exchange" : "illegal: counted"
                }
            ),
            (
                "the request's end",
                { machine in
                    let result = delivery(&machine, .end(nil))
                    guard result == "deliver", machine.exchange != nil else { return result }
                    return action(machine.exchangeEvent(now: start) { $0.requestEnd(now: start) })
                }
            ),
            (
                "bytes that made no part",
                { machine in
                    machine.readComplete(deliveredPart: false, now: start)
                    return "—"
                }
            ),
            (
                "the exchange finished",
                { machine in
                    // The exchange's action that ends it, as the exchange decides: closing when it will not keep
                    // the connection. The connection's decision leaves in that action.
                    guard let exchange = machine.exchange else { return "cannot happen" }
                    let close = exchange.persistence == .close
                    switch machine.exchangeEvent(now: start, { _ in .finish(close: close) }) {
                    case .exchange(.finish(close: true)): return "close"
                    case .exchange(.finish(close: false)):
                        var taken: [String] = []
                        while case let next = machine.nextQueued(now: start), next != .none {
                            if case .deliver = next {
                                taken.append("deliver what is queued")
                            } else {
                                taken.append(action(next))
                            }
                            if case .refuse = next { break }
                        }
                        return taken.isEmpty ? "await a request" : taken[0]
                    default: return "illegal: counted"
                    }
                }
            ),
            (
                "a malformed message",
                { machine in
                    let next = machine.decoderFailed(.init(problem: .badRequest(detail: "x"), label: "x"), now: start)
                    if case .refusalWaiting = machine.reading { return "answer it in its turn" }
                    return next == .none ? "ignore it" : action(next)
                }
            ),
            (
                "the timer, all due",
                { machine in
                    guard machine.exchange == nil else { return "the exchange's deadlines" }
                    return action(machine.deadlinesDue(now: later, readsWithheld: false))
                }
            ),
            ("quiesce", { action($0.quiesce(now: start)) }),
            ("the listener wants room", { action($0.closeIfIdle()) }),
            (
                "the exchange became a tunnel",
                { machine in
                    guard machine.exchange != nil else { return "—" }
                    machine.tunnel()
                    return "leave the pipeline"
                }
            ),
            (
                "the client closed",
                { machine in action(machine.clientClosed()) == "—" ? "—" : "abandon the exchange" }
            ),
        ]
    }

    @Test("the connection's table")
    func connection() throws {
        let start = Machine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        // Each event marked when the machine counts it illegal.
        let events = Self.events.map { event in
            (
                event.0,
                { (machine: inout Machine) -> String in
                    let before = machine.illegalEvents
                    let action = event.1(&machine)
                    return machine.illegalEvents > before ? "illegal: counted" : action
                }
            )
        }
        var table = TransitionTable(start: start, name: Self.name, events: events)
        // Closed and tunnelled are the ends: the handler has left the pipeline, or the channel is closing.
        table.omitted = {
            $0.action == "illegal: counted" || $0.action == "cannot happen" || $0.from.hasPrefix("closed")
                || $0.from.hasPrefix("tunnelled")
                || $0.from.hasPrefix("lingering")
                || ($0.from.hasPrefix("idle") && $0.event == "the request's end")  // no end without a head
        }
        try table.expectDocumented(as: "connection-transitions")
    }
}
