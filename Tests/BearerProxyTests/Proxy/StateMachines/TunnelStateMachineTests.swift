import NIOCore
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

/// #23 item 2: the WebSocket tunnel's life as a machine — pure, so each rule is one test, and a sweep of every event
/// sequence up to depth 6 checks the invariants from every state it reaches.
@Suite("WebSocket tunnel: its machine, pure", .ownThread)
struct TunnelStateMachineTests {
    typealias Machine = TunnelStateMachine
    typealias Side = TunnelStateMachine.Side

    static func machine(strict: Bool = true) -> Machine {
        Machine(idleLimit: .seconds(60), now: .uptimeNanoseconds(0), assertsOnIllegalEvents: strict)
    }

    @Test("the tunnel ends once both connections have closed, whichever closed first; bytes each way counted")
    func bothEnds() {
        for first in Side.allCases {
            var tunnel = Self.machine()
            #expect(tunnel.received(5, from: .client, now: .uptimeNanoseconds(1)) == .none)
            #expect(tunnel.received(7, from: .upstream, now: .uptimeNanoseconds(2)) == .none)
            #expect(tunnel.connectionClosed(first) == .close(first.other))
            #expect(tunnel.state == .closing)
            #expect(tunnel.connectionClosed(first.other) == .report)
            #expect(tunnel.state == .finished)
            #expect((tunnel.bytesFromClient, tunnel.bytesFromUpstream) == (5, 7))
        }
    }

    @Test("a FIN from one end stops the other's output; the other end still sends; a second FIN closes both")
    func halfClose() {
        for side in Side.allCases {
            var tunnel = Self.machine()
            #expect(tunnel.inputClosed(side) == .finishSending(side.other))
            #expect(tunnel.state == .halfClosed(sending: side.other))
            #expect(tunnel.received(3, from: side.other, now: .uptimeNanoseconds(5)) == .none)
            #expect(tunnel.inputClosed(side.other) == .closeBoth)
            #expect(tunnel.state == .closing)
            #expect(tunnel.illegalEvents == 0)
        }
    }

    @Test("a connection that cannot half-close (TLS) closes instead")
    func halfCloseFails() {
        var tunnel = Self.machine()
        #expect(tunnel.inputClosed(.client) == .finishSending(.upstream))
        #expect(tunnel.finishSendingFailed(.upstream) == .close(.upstream))
        #expect(tunnel.connectionClosed(.upstream) == .close(.client))
        #expect(tunnel.connectionClosed(.client) == .report)
    }

    @Test("no byte either way for the idle limit closes both; a byte in between moves the check")
    func idle() {
        var tunnel = Self.machine()
        #expect(tunnel.firstIdleCheck == .uptimeNanoseconds(0) + .seconds(60))
        _ = tunnel.received(1, from: .upstream, now: .uptimeNanoseconds(0) + .seconds(30))
        #expect(
            tunnel.idleCheck(now: .uptimeNanoseconds(0) + .seconds(60))
                == .armIdleCheck(.uptimeNanoseconds(0) + .seconds(90)))
        #expect(tunnel.idleCheck(now: .uptimeNanoseconds(0) + .seconds(90)) == .closeBoth)
        #expect(tunnel.idleCheck(now: .uptimeNanoseconds(0) + .seconds(200)) == .none)
    }

    @Test("an event that cannot happen closes both and is counted, never ignored")
    func illegalEvent() {
        var tunnel = Self.machine(strict: false)
        _ = tunnel.inputClosed(.client)
        // The client already sent FIN: a byte from it cannot come.
        #expect(tunnel.received(1, from: .client, now: .uptimeNanoseconds(1)) == .closeBoth)
        #expect(tunnel.illegalEvents == 1)
        #expect(tunnel.state == .closing)
        var closed = Self.machine(strict: false)
        _ = closed.connectionClosed(.client)
        #expect(closed.connectionClosed(.client) == .closeBoth)
        #expect(closed.illegalEvents == 1)
    }

    // MARK: The sweep

    /// An event of the sweep.
    enum Event: CaseIterable {
        case bytesClient, bytesUpstream, finClient, finUpstream, halfCloseFailsClient, halfCloseFailsUpstream
        case closedClient, closedUpstream, idleEarly, idleLate, closeNow

        func apply(to machine: inout Machine) -> Machine.Action {
            switch self {
            case .bytesClient: machine.received(1, from: .client, now: .uptimeNanoseconds(1))
            case .bytesUpstream: machine.received(1, from: .upstream, now: .uptimeNanoseconds(1))
            case .finClient: machine.inputClosed(.client)
            case .finUpstream: machine.inputClosed(.upstream)
            case .halfCloseFailsClient: machine.finishSendingFailed(.client)
            case .halfCloseFailsUpstream: machine.finishSendingFailed(.upstream)
            case .closedClient: machine.connectionClosed(.client)
            case .closedUpstream: machine.connectionClosed(.upstream)
            case .idleEarly: machine.idleCheck(now: .uptimeNanoseconds(2))
            case .idleLate: machine.idleCheck(now: .uptimeNanoseconds(0) + .hours(1))
            case .closeNow: machine.closeNow()
            }
        }
    }

    /// What the sockets allow, to tell the events that can happen from those that cannot.
    struct World {
        var finished: Set<Side> = []
        var closed: Set<Side> = []

        func allows(_ event: Event) -> Bool {
            switch event {
            case .bytesClient: !finished.contains(.client) && !closed.contains(.client)
            case .bytesUpstream: !finished.contains(.upstream) && !closed.contains(.upstream)
            case .finClient: !finished.contains(.client) && !closed.contains(.client)
            case .finUpstream: !finished.contains(.upstream) && !closed.contains(.upstream)
            case .halfCloseFailsClient: !closed.contains(.client)
            case .halfCloseFailsUpstream: !closed.contains(.upstream)
            case .closedClient: !closed.contains(.client)
            case .closedUpstream: !closed.contains(.upstream)
            case .idleEarly, .idleLate, .closeNow: true
            }
        }

        mutating func record(_ event: Event) {
            switch event {
            case .finClient: finished.insert(.client)
            case .finUpstream: finished.insert(.upstream)
            case .closedClient: closed.insert(.client)
            case .closedUpstream: closed.insert(.upstream)
            default: break
            }
        }
    }

    static let depth = 6

    @Test(
        "every sequence of events that can happen, to depth 6: no illegal event, one report at most and only at the end, nothing after it, and the end always reachable"
    )
    func sweepPossibleSequences() {
        var visited = 0
        var failures: [String] = []
        func walk(_ machine: Machine, _ world: World, _ path: [Event], reports: Int) {
            visited += 1
            // From here, the sockets closing must finish the tunnel and report it exactly once in all.
            var ending = machine
            var endReports = reports
            for side in Side.allCases where !world.closed.contains(side) {
                if ending.connectionClosed(side) == .report { endReports += 1 }
            }
            if ending.state != .finished || endReports != 1 || ending.illegalEvents != 0 {
                failures.append("\(path): closing the sockets left \(ending.state), \(endReports) reports")
            }
            guard path.count < Self.depth, failures.count < 5 else { return }
            for event in Event.allCases where world.allows(event) {
                var next = machine
                var nextWorld = world
                let action = event.apply(to: &next)
                nextWorld.record(event)
                if next.illegalEvents != 0 { failures.append("\(path + [event]): illegal in \(machine.state)") }
                if machine.state == .finished && action != .none {
                    failures.append("\(path + [event]): \(action) after the end")
                }
                if action == .report && nextWorld.closed.count != 2 {
                    failures.append("\(path + [event]): reported with a connection open")
                }
                walk(next, nextWorld, path + [event], reports: reports + (action == .report ? 1 : 0))
            }
        }
        walk(Self.machine(), World(), [], reports: 0)
        #expect(failures.isEmpty, "\(failures)")
        #expect(visited > 10_000)
    }

    @Test("any sequence at all, to depth 5, the impossible ones too: never a second report, nothing after the end")
    func sweepAnySequences() {
        var failures: [String] = []
        func walk(_ machine: Machine, _ path: [Event], reports: Int) {
            guard path.count < 5, failures.count < 5 else { return }
            for event in Event.allCases {
                var next = machine
                let action = event.apply(to: &next)
                let total = reports + (action == .report ? 1 : 0)
                if total > 1 { failures.append("\(path + [event]): a second report") }
                if machine.state == .finished && action != .none {
                    failures.append("\(path + [event]): \(action) after the end")
                }
                if next.illegalEvents > machine.illegalEvents && next.state != .closing && next.state != .finished {
                    failures.append("\(path + [event]): an illegal event left the tunnel \(next.state)")
                }
                walk(next, path + [event], reports: total)
            }
        }
        walk(Self.machine(strict: false), [], reports: 0)
        #expect(failures.isEmpty, "\(failures)")
    }
}
