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

/// #23 item 7: docs/architecture.md's transition tables of the tunnel and the upstream connection are the machines'
/// own, found by trying every event in every reachable state (``TransitionTable``).
@Suite("The machines' transition tables in docs/architecture.md match the code")
struct MachineDiagramTests {
    static let start = NIODeadline.uptimeNanoseconds(0)

    @Test("the WebSocket tunnel's table")
    func tunnel() throws {
        typealias Machine = TunnelStateMachine
        func name(_ machine: Machine) -> String {
            let state =
                switch machine.state {
                case .open: "open"
                case .halfClosed(let sending): "half-closed, \(sending) sending"
                case .closing: "closing"
                case .finished: "finished"
                }
            guard machine.openConnections.count == 1, let open = machine.openConnections.first else { return state }
            return "\(state), \(open) open"
        }
        func action(_ action: Machine.Action) -> String {
            switch action {
            case .none: "—"
            case .finishSending(let side): "stop \(side)'s output"
            case .close(let side): "close \(side)"
            case .closeBoth: "close both"
            case .armIdleCheck: "check again when due"
            case .report: "report the tunnel"
            }
        }
        func event(_ apply: @escaping (inout Machine) -> Machine.Action) -> (inout Machine) -> String {
            { machine in
                let before = machine.illegalEvents
                let result = action(apply(&machine))
                return machine.illegalEvents > before ? "\(result) (illegal: counted)" : result
            }
        }
        var events: [(String, (inout Machine) -> String)] = []
        for side in Machine.Side.allCases {
            events += [
                ("bytes from \(side)", event { $0.received(1, from: side, now: Self.start) }),
                ("FIN from \(side)", event { $0.inputClosed(side) }),
                ("\(side) cannot half-close", event { $0.finishSendingFailed(side) }),
                ("\(side) closed", event { $0.connectionClosed(side) }),
            ]
        }
        events += [
            ("idle check, not due", event { $0.idleCheck(now: Self.start) }),
            ("idle check, due", event { $0.idleCheck(now: Self.start + .hours(1)) }),
            ("shutdown or error", event { $0.closeNow() }),
        ]
        let table = TransitionTable(
            start: Machine(idleLimit: .seconds(60), now: Self.start, assertsOnIllegalEvents: false), name: name,
            events: events)
        try table.expectDocumented(as: "tunnel-transitions")
    }

    @Test("the upstream connection's table")
    func upstreamConnection() throws {
        typealias Machine = UpstreamConnectionStateMachine
        func name(_ machine: Machine) -> String {
            switch machine.state {
            case .fresh: "new"
            case .leased(let reused, let answered):
                "leased" + (reused ? ", from the pool" : ", new") + (answered ? ", answered" : "")
            case .releasing: "releasing"
            case .pooled: "pooled"
            case .closed: "closed"
            }
        }
        func action(_ action: Machine.Action) -> String {
            switch action {
            case .none: "—"
            case .close: "close it"
            case .tellExchange(let reused, let answered): "tell the exchange (reused: \(reused), answered: \(answered))"
            case .leavePool: "leave the pool"
            case .joinPool: "join the pool"
            }
        }
        let events: [(String, (inout Machine) -> String)] = [
            ("an exchange takes it", { $0.lease() ? "—" : "refused" }),
            ("response bytes", { action($0.responseBytes()) }),
            ("the exchange is done with it", { $0.park(now: Self.start) ? "—" : "refused" }),
            ("the exchange is done with it inside a read", { $0.release(now: Self.start) ? "—" : "refused" }),
            ("the read completes, nothing after the answer", { action($0.readCompleted(overran: false)) }),
            ("the read completes, bytes after the answer", { action($0.readCompleted(overran: true)) }),
            (
                "the pool's sweep, not idle long",
                { $0.idleTooLong(now: Self.start, limit: .seconds(30)) ? "close it" : "—" }
            ),
            (
                "the pool's sweep, idle too long",
                {
                    $0.idleTooLong(now: Self.start + .hours(1), limit: .seconds(30)) ? "close it" : "—"
                }
            ),
            (
                "the proxy closes it",
                { machine in
                    machine.close()
                    return "—"
                }
            ),
            ("the connection closed", { action($0.closed()) }),
        ]
        let table = TransitionTable(start: Machine(), name: name, events: events)
        try table.expectDocumented(as: "upstream-connection-transitions")
    }
}
