import NIOCore
import NIOHTTP1
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// #23 item 3: beyond single transitions — every sequence of the events a handler can feed one proxied exchange, to
/// depth 6, from the start of a GET, a POST and a WebSocket handshake, with and without a token wait. A model of the
/// sockets says which events can happen (a body part only before the request's end, a connection only for the
/// ticket asked for, a response part only on a connection in use); the handler's part is played as it runs each
/// action. Invariants checked after every step:
///
/// - at most one response head goes to the client, and an exchange that ends normally has had one;
/// - an upstream connection in use is released or closed exactly once, and none is left when the exchange is over;
/// - no action once the exchange is over (but parking a connection that arrives late: data-plane pitfall 6);
/// - from every state reached, the events that complete it (request end, token, connection, head, end) finish it;
/// - no event the sockets can deliver is illegal (``ExchangeStateMachine/Action/abort`` never comes).
@Suite("Exchange state machine: every event sequence to depth 6, pure", .ownThread)
struct ExchangeSweepTests {
    typealias Machine = ExchangeStateMachine
    typealias Action = ExchangeStateMachine.Action

    /// What the sockets and the handler know besides the machine.
    struct World {
        var requestEnded = false
        var pendingToken: Machine.Ticket?
        var pendingConnect: Machine.Ticket?
        var attached = false
        var finalHead = false
        var heads = 0
        var over = false
        var tunnel = false
    }

    enum Event: CaseIterable {
        case body, end, token, tokenFails, connected, connectFails, head200, head401, head403StepUp, head100, head101
        case responseBody
        case responseEnd, staleClose, resetAfterBytes, timer, clientGone
    }

    struct Step {
        var machine: Machine
        var world: World
    }

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func allows(_ event: Event, _ world: World) -> Bool {
        if world.over { return false }
        switch event {
        case .body, .end: return !world.requestEnded
        case .token, .tokenFails: return world.pendingToken != nil
        case .connected, .connectFails: return world.pendingConnect != nil
        case .head200, .head401, .head403StepUp, .head100, .head101: return world.attached && !world.finalHead
        case .responseBody, .responseEnd: return world.attached && world.finalHead
        case .staleClose, .resetAfterBytes: return world.attached
        case .timer, .clientGone: return true
        }
    }

    /// Applies `event`, plays the handler's part, and returns the failures of the invariants.
    static func apply(_ event: Event, to step: inout Step) -> [String] {
        var failures: [String] = []
        let now = start + .milliseconds(1)
        let action: Action
        switch event {
        case .body: action = step.machine.requestBody(ByteBuffer(string: "x"), now: now)
        case .end:
            step.world.requestEnded = true
            action = step.machine.requestEnd(now: now)
        case .token:
            let ticket = step.world.pendingToken!
            step.world.pendingToken = nil
            action = step.machine.tokenArrived(ticket)
        case .tokenFails:
            let ticket = step.world.pendingToken!
            step.world.pendingToken = nil
            action = step.machine.tokenFailed(ticket, .providerUnavailable(reason: "down", retryAfterSeconds: 1))
        case .connected:
            let ticket = step.world.pendingConnect!
            step.world.pendingConnect = nil
            action = step.machine.connected(ticket, now: now)
        case .connectFails:
            let ticket = step.world.pendingConnect!
            step.world.pendingConnect = nil
            action = step.machine.connectFailed(ticket, .refused)
        case .head200:
            step.world.finalHead = true
            action = step.machine.responseHead(ExchangeScript.responseHead(.ok))
        case .head401:
            step.world.finalHead = true
            action = step.machine.responseHead(ExchangeScript.responseHead(.unauthorized), retry: .refresh)
        case .head403StepUp:
            step.world.finalHead = true
            action = step.machine.responseHead(
                ExchangeScript.responseHead(.forbidden), retry: .stepUp(["s"]), stepUp: ["s"])
        case .head100:
            action = step.machine.responseHead(ExchangeScript.responseHead(.continue))
        case .head101:
            step.world.finalHead = true
            action = step.machine.responseHead(ExchangeScript.responseHead(.switchingProtocols))
        case .responseBody: action = step.machine.responseBody(ByteBuffer(string: "y"))
        case .responseEnd: action = step.machine.responseEnd(now: now)
        case .staleClose, .resetAfterBytes:
            // The connection is gone before the machine hears of it: the handler forgets it first.
            step.world.attached = false
            step.world.finalHead = false
            action = step.machine.upstreamClosed(neverProcessed: event == .staleClose)
        case .timer: action = step.machine.deadlinesDue(now: start + .hours(1), readsWithheld: false)
        case .clientGone:
            guard case .abandon(let closeUpstream, _) = step.machine.clientClosed() else {
                return ["client gone: not abandoned"]
            }
            if closeUpstream != step.world.attached {
                failures.append(
                    "client gone: closeUpstream \(closeUpstream) with a connection in use: \(step.world.attached)")
            }
            step.world.attached = false
            step.world.over = true
            return failures
        }
        failures += perform(action, on: &step.world)
        return failures
    }

    /// The handler's part of `action`, on the model.
    static func perform(_ action: Action, on world: inout World) -> [String] {
        var failures: [String] = []
        func release() {
            if !world.attached { failures.append("\(action): releases a connection not in use") }
            world.attached = false
            world.finalHead = false
        }
        switch action {
        case .none, .forwardBody, .consumeLocally, .forwardEnd, .answerLocally, .forwardInformational, .sendContinue,
            .parkConnection:
            break
        case .forwardResponseBody:
            if world.heads != 1 { failures.append("\(action): a body part without its head") }
        case .fetchToken(let ticket, _): world.pendingToken = ticket
        case .connect(let ticket): world.pendingConnect = ticket
        case .sendRequest:
            if world.attached { failures.append("\(action): a second connection in use") }
            world.attached = true
            world.finalHead = false
        case .forwardResponseHead, .forwardRejection:
            world.heads += 1
        case .finishResponse(_, _, let then):
            release()
            if case .finished = then { world.over = true }
        case .replayWithNewToken(_, _, let ticket):
            release()
            world.pendingToken = ticket
        case .answer(_, _, let closeUpstream, let then):
            world.heads += 1
            if closeUpstream {
                // After the connection closed on its own, the handler has already forgotten it: nothing to close.
                world.attached = false
                world.finalHead = false
            } else if world.attached {
                failures.append("\(action): answered with a connection still in use and kept")
            }
            if case .finished = then { world.over = true }
        case .closeConnection(let closeUpstream):
            if world.attached && !closeUpstream { failures.append("\(action): the connection in use is left open") }
            world.attached = false
            world.over = true
        case .abandon:
            failures.append("\(action) for an event other than the client's close")
        case .abort:
            failures.append("an event the sockets can deliver was illegal")
        case .switchProtocols:
            world.heads += 1
            world.attached = false  // handed to the tunnel
            world.tunnel = true
            world.over = true
        case .finish:
            world.over = true
        }
        if world.heads > 1 { failures.append("\(action): a second response head") }
        if world.over && world.attached { failures.append("\(action): over with a connection in use") }
        return failures
    }

    /// Completes the exchange with the events of a well-behaved client and upstream; whether it ends.
    static func completes(_ start: Step) -> Bool {
        var step = start
        for _ in 0..<12 where !step.world.over {
            let event: Event
            if !step.world.requestEnded {
                event = .end
            } else if step.world.pendingToken != nil {
                event = .token
            } else if step.world.pendingConnect != nil {
                event = .connected
            } else if step.world.attached && !step.world.finalHead {
                event = step.machine.request.upgrade == .webSocket ? .head101 : .head200
            } else if step.world.attached {
                event = .responseEnd
            } else {
                event = .timer
            }
            _ = apply(event, to: &step)
        }
        return step.world.over
    }

    static let requests: [(String, Machine.Request)] = [
        ("GET", .init(method: .GET)),
        ("POST", .init(method: .POST)),
        ("PUT with Expect: 100-continue", .init(method: .PUT, expectsContinue: true)),
        ("WebSocket handshake", .init(method: .GET, upgrade: .webSocket)),
    ]

    @Test(
        "from the start of a proxied exchange, every possible event sequence keeps the invariants",
        arguments: [false, true])
    func sweep(needsToken: Bool) {
        for (name, request) in Self.requests {
            var machine = Machine(
                serial: 1, request: request, now: Self.start, bodyStall: .seconds(60), assertsOnIllegalEvents: false)
            var world = World()
            let first = machine.route(
                .upstream(sendsToken: true, needsToken: needsToken, limit: .seconds(30)), now: Self.start)
            var failures = Self.perform(first, on: &world)
            var visited = 0
            func walk(_ step: Step, _ path: [Event]) {
                visited += 1
                if !Self.completes(step) { failures.append("\(name) \(path): cannot finish from here") }
                if step.world.over && step.world.heads == 0 && !step.world.tunnel && path.last != .clientGone {
                    failures.append("\(name) \(path): over without a response")
                }
                guard path.count < 6, failures.count < 5 else { return }
                for event in Event.allCases where Self.allows(event, step.world) {
                    var next = step
                    for failure in Self.apply(event, to: &next) {
                        failures.append("\(name) \(path + [event]): \(failure)")
                    }
                    if next.world.over {
                        // Nothing the machine hears after its end may start anything (a late connection is parked).
                        var after = next.machine
                        let late: [Action] = [
                            after.tokenArrived(Machine.Ticket(exchange: 1, attempt: 99)),
                            after.responseEnd(now: Self.start), after.upstreamClosed(neverProcessed: true),
                            after.requestBody(ByteBuffer(string: "x"), now: Self.start),
                        ]
                        for action in late where action != .none && !next.world.tunnel {
                            failures.append("\(name) \(path + [event]): \(action) after the end")
                        }
                    }
                    walk(next, path + [event])
                }
            }
            walk(Step(machine: machine, world: world), [])
            #expect(failures.isEmpty, "\(failures)")
            #expect(visited > 1_000, "\(name): \(visited) states")
        }
    }
}
