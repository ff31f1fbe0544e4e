import NIOCore
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// #23 item 3 for the client connection's machine: every sequence, to depth 6, of what a client's byte stream can
/// make the parser deliver (heads, body parts, ends, a malformed message, the close) and of what the proxy does
/// meanwhile (a local answer arriving, the timer, quiescing, a listener wanting room). The handler's part is played as
/// ``ProxyConnectionHandler`` plays it, by performing the machine's ``ConnectionStateMachine/Action``s: a delivered
/// head begins an exchange (routed to a local endpoint, whose answer comes as an event), a finished exchange takes
/// what is queued, and the machine answers a deferred refusal in its turn.
/// Invariants checked after every step:
///
/// - requests are taken one at a time and in the order sent; each part reaches the exchange of its own request;
/// - each request gets at most one response, and responses go out in request order (RFC 9112 §9.3.2);
/// - a malformed pipelined message is answered only once every request before it has its response, then the
///   connection closes; nothing is read after the connection's last request;
/// - nothing is delivered once the connection is closed, and no event a client can cause is illegal;
/// - from every state, a client that completes its request and waits gets its answers and an idle or closed
///   connection.
@Suite("Connection state machine: every event sequence to depth 6, pure", .ownThread)
struct ConnectionSweepTests {
    typealias Machine = ConnectionStateMachine
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let limits = Machine.Limits(idle: .seconds(75), requestHead: .seconds(10), bodyStall: .seconds(60))

    enum Event: CaseIterable {
        case head, headLast, body, end, garbage, localAnswer, timer, quiesce, roomWanted, readWithoutPart, clientGone
    }

    /// What the client sent and the handler saw, besides the machine.
    struct World {
        /// Requests sent, in order, with whether each asked to keep the connection.
        var sent = 0
        /// The client is in the middle of a message (its head went, its end not yet).
        var inMessage = false
        /// The parser met a malformed message: it delivers nothing more.
        var parserBroken = false
        /// The request (its index in `sent`) the exchange in progress serves, and its local answer's ticket.
        var serving: Int?
        var pendingAnswer: ExchangeStateMachine.Ticket?
        /// Requests delivered (begun), responses written (by request index, in order), and whether the connection
        /// closed.
        var begun = 0
        var responses: [Int] = []
        var answeredMalformed = false
        var closed = false
        var failures: [String] = []
    }

    struct Step {
        var machine: Machine
        var world: World
    }

    static func allows(_ event: Event, _ world: World) -> Bool {
        if world.closed { return false }
        switch event {
        case .head, .headLast: return !world.inMessage && !world.parserBroken
        case .body, .end: return world.inMessage && !world.parserBroken
        case .garbage: return !world.parserBroken
        case .localAnswer: return world.pendingAnswer != nil
        case .timer, .quiesce, .roomWanted, .readWithoutPart, .clientGone: return true
        }
    }

    /// Request `request`'s head; its body parts carry its number too, so each delivery is checked.
    static func head(_ request: Int, keepAlive: Bool) -> ClientRequestPart {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/-/\(request)")
        if !keepAlive { head.headers.add(name: "connection", value: "close") }
        return .head(head)
    }

    // MARK: The handler's part

    /// The parser delivers `part`.
    static func receive(_ part: ClientRequestPart, _ step: inout Step) {
        perform(step.machine.received(part), &step)
    }

    /// Performs a connection action, as the handler's `run` does.
    static func perform(_ action: Machine.Action, _ step: inout Step) {
        switch action {
        case .none:
            break
        case .exchange(let action), .responseHead(let action, _, _):
            run(action, &step)
        case .deliver(let part):
            dispatch(part, &step)
        case .refuse(let action, _):
            if step.world.serving == nil { step.world.serving = step.world.begun }
            // A refusal is always an exchange's answer: one begun for it when none was in progress.
            if case .answer = action, step.world.begun == step.world.serving {
                step.world.begun += 1  // the exchange begun for the malformed message
            }
            run(action, &step)
        case .close:
            step.world.closed = true
        }
    }

    static func dispatch(_ part: ClientRequestPart, _ step: inout Step) {
        let now = start
        switch part {
        case .head(let received):
            let head = received.line
            let request = Int(head.uri.dropFirst(3)) ?? -1
            if request != step.world.begun {
                step.world.failures.append("request \(request) began out of order (expected \(step.world.begun))")
            }
            guard step.machine.begin(.init(method: head.method, keepAlive: received.keepAlive), now: now) == .none
            else {
                step.world.failures.append("a head delivered while an exchange is in progress")
                return
            }
            step.world.begun += 1
            step.world.serving = request
            perform(step.machine.exchangeEvent(now: now) { $0.route(.local, now: now) }, &step)
        case .body(let buffer):
            let request = Int(String(buffer: buffer)) ?? -1
            if step.world.serving != request { step.world.failures.append("a body part of \(request) misdelivered") }
            perform(step.machine.exchangeEvent(now: now) { $0.requestBody(buffer, now: now) }, &step)
        case .end:
            if step.world.serving == nil { step.world.failures.append("a request's end with no exchange") }
            perform(step.machine.exchangeEvent(now: now) { $0.requestEnd(now: now) }, &step)
        }
    }

    static func run(_ action: ExchangeStateMachine.Action, _ step: inout Step) {
        switch action {
        case .answerLocally(let ticket):
            step.world.pendingAnswer = ticket
        case .answer(let answer, _, _, let then):
            if case .problem(.badRequest) = answer {
                step.world.answeredMalformed = true
                if step.world.responses.count != step.world.begun - 1 {
                    step.world.failures.append("the malformed message answered before the requests ahead of it")
                }
            } else if let serving = step.world.serving {
                if step.world.responses.last.map({ $0 >= serving }) == true {
                    step.world.failures.append("a second response, or one out of order, for \(serving)")
                }
                step.world.responses.append(serving)
            }
            step.world.pendingAnswer = nil
            if case .finished(let close) = then { finish(close: close, &step) }
        case .finish(let close):
            finish(close: close, &step)
        case .closeConnection:
            step.world.closed = true
        case .none, .consumeLocally:
            break
        default:
            step.world.failures.append("\(action) for a local exchange")
        }
    }

    /// The exchange is over, and the connection has decided (`close`, in the action that ended it): closed, or on
    /// to what is queued, as the handler's `finishExchange` does.
    static func finish(close: Bool, _ step: inout Step) {
        step.world.serving = nil
        if close {
            step.world.closed = true
            return
        }
        while case let next = step.machine.nextQueued(now: start), next != .none {
            perform(next, &step)
            if case .refuse = next { break }
        }
    }

    static func apply(_ event: Event, to step: inout Step) {
        let later = start + .hours(1)
        switch event {
        case .head, .headLast:
            let request = step.world.sent
            step.world.sent += 1
            step.world.inMessage = true
            receive(head(request, keepAlive: event == .head), &step)
        case .body:
            receive(.body(ByteBuffer(string: "\(step.world.sent - 1)")), &step)
        case .end:
            step.world.inMessage = false
            receive(.end(nil), &step)
        case .garbage:
            step.world.parserBroken = true
            let refusal = Machine.Refusal(problem: .badRequest(detail: "malformed"), label: "malformed")
            perform(step.machine.decoderFailed(refusal, now: start), &step)
        case .localAnswer:
            let ticket = step.world.pendingAnswer!
            let response = LocalResponse(status: .ok, contentType: "text/plain", body: ByteBuffer())
            perform(step.machine.exchangeEvent(now: start) { $0.localAnswer(ticket, .response(response)) }, &step)
        case .timer:
            perform(step.machine.deadlinesDue(now: later, readsWithheld: false), &step)
        case .quiesce:
            perform(step.machine.quiesce(now: start), &step)
        case .roomWanted:
            perform(step.machine.closeIfIdle(), &step)
        case .readWithoutPart:
            step.machine.readComplete(deliveredPart: false, now: start)
        case .clientGone:
            _ = step.machine.clientClosed()
            step.world.closed = true
        }
        if step.machine.illegalEvents > 0 || (step.machine.exchange?.illegalEvents ?? 0) > 0 {
            step.world.failures.append("an illegal event")
        }
    }

    /// A client that finishes its message and waits, and a proxy that answers: the connection ends idle with
    /// nothing queued, or closed.
    static func settles(_ start: Step) -> Bool {
        var step = start
        for _ in 0..<24 where !step.world.closed {
            if step.world.inMessage && !step.world.parserBroken {
                apply(.end, to: &step)
            } else if step.world.pendingAnswer != nil {
                apply(.localAnswer, to: &step)
            } else if step.machine.exchange == nil && step.machine.queued.isEmpty {
                return step.world.failures.isEmpty
            } else {
                apply(.timer, to: &step)
            }
        }
        return step.world.closed && step.world.failures.isEmpty
    }

    @Test("from a new connection, every event sequence to depth 6 keeps the invariants")
    func sweep() {
        let machine = Machine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        var failures: [String] = []
        var visited = 0
        func walk(_ step: Step, _ path: [Event]) {
            visited += 1
            if !step.world.failures.isEmpty {
                failures.append("\(path): \(step.world.failures)")
                return
            }
            if !Self.settles(step) { failures.append("\(path): does not settle") }
            var probe = step.machine
            if step.world.closed, case .deliver = probe.received(.end(nil)) {
                failures.append("\(path): a part delivered after the close")
            }
            guard path.count < 6, failures.count < 5 else { return }
            for event in Event.allCases where Self.allows(event, step.world) {
                var next = step
                Self.apply(event, to: &next)
                walk(next, path + [event])
            }
        }
        walk(Step(machine: machine, world: World()), [])
        #expect(failures.isEmpty, "\(failures)")
        #expect(visited > 10_000, "\(visited) states")
    }
}
