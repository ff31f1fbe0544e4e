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

/// #23 item 2: an upstream connection's life — new, leased to one exchange, pooled, closed — and the two facts that
/// decide a replay (reused, answered), pure; with a sweep of every event sequence to depth 6.
@Suite("Upstream connection: its machine, pure", .ownThread)
struct UpstreamConnectionStateMachineTests {
    typealias Machine = UpstreamConnectionStateMachine
    static let start = NIODeadline.uptimeNanoseconds(0)

    @Test("a new connection's first exchange sees it not reused; after the pool, reused; bytes make it answered")
    func replayFacts() {
        var connection = Machine()
        var leased = connection.lease()
        #expect(leased)
        var told = connection.closed()
        #expect(told == .tellExchange(reused: false, answered: false))

        var pooled = Machine()
        leased = pooled.lease()
        var action = pooled.responseBytes()
        let parked = pooled.park(now: Self.start)
        #expect(leased && action == .none && parked)
        leased = pooled.lease()
        #expect(leased)
        #expect(pooled.state == .leased(reused: true, answered: false), "the last exchange's bytes carried over")
        action = pooled.responseBytes()
        told = pooled.closed()
        #expect(action == .none)
        #expect(told == .tellExchange(reused: true, answered: true))
    }

    @Test("one exchange at a time: a leased connection cannot be leased again, nor a closed one")
    func oneAtATime() {
        var connection = Machine()
        let first = connection.lease()
        let second = connection.lease()
        #expect(first && !second)
        connection.close()
        let afterClose = connection.lease()
        let parked = connection.park(now: Self.start)
        #expect(!afterClose && !parked)
    }

    @Test("any byte while nobody asked (new or pooled) closes it: it would be taken for the next answer")
    func bytesWhileIdle() {
        var pooled = Machine()
        _ = pooled.park(now: Self.start)
        let action = pooled.responseBytes()
        #expect(action == .close)
        #expect(pooled.state == .closed)
        var fresh = Machine()
        let early = fresh.responseBytes()
        #expect(early == .close)
    }

    @Test("released inside a read, it joins the pool when the read completes clean; bytes after the answer end it")
    func releasedInsideARead() {
        var clean = Machine()
        _ = clean.lease()
        let released = clean.release(now: Self.start)
        let leasedMeanwhile = clean.lease()
        #expect(released && !leasedMeanwhile, "nobody takes it before the read completes")
        let completion = clean.readCompleted(overran: false)
        #expect(completion == .joinPool(since: Self.start))
        var overran = Machine()
        _ = overran.lease()
        _ = overran.release(now: Self.start)
        let ended = overran.readCompleted(overran: true)
        #expect(ended == .close)
        #expect(overran.state == .closed)
        var laterBytes = Machine()
        _ = laterBytes.lease()
        _ = laterBytes.release(now: Self.start)
        let bytes = laterBytes.responseBytes()
        #expect(bytes == .close, "a later read of the same batch brought bytes nobody asked for")
        var idle = Machine()
        let notLeased = idle.release(now: Self.start)
        #expect(!notLeased, "only a leased connection is released")
    }

    @Test("the pool's sweep closes it once idle for the limit, not before; a pooled one that closes leaves the pool")
    func idle() {
        var connection = Machine()
        _ = connection.park(now: Self.start)
        let early = connection.idleTooLong(now: Self.start + .seconds(29), limit: .seconds(30))
        let due = connection.idleTooLong(now: Self.start + .seconds(30), limit: .seconds(30))
        #expect(!early && due)
        #expect(connection.state == .closed)
        var other = Machine()
        _ = other.park(now: Self.start)
        let told = other.closed()
        #expect(told == .leavePool)
    }

    enum Event: CaseIterable {
        case lease, bytes, park, release, readClean, readOverran, sweepEarly, sweepLate, close, closed

        func apply(to machine: inout Machine) -> (leased: Bool, action: Machine.Action) {
            switch self {
            case .lease: (machine.lease(), .none)
            case .bytes: (false, machine.responseBytes())
            case .park: (false, machine.park(now: UpstreamConnectionStateMachineTests.start) ? .none : .none)
            case .release: (false, machine.release(now: UpstreamConnectionStateMachineTests.start) ? .none : .close)
            case .readClean: (false, machine.readCompleted(overran: false))
            case .readOverran: (false, machine.readCompleted(overran: true))
            case .sweepEarly:
                (
                    false,
                    machine.idleTooLong(now: UpstreamConnectionStateMachineTests.start, limit: .seconds(30))
                        ? .close : .none
                )
            case .sweepLate:
                (
                    false,
                    machine.idleTooLong(now: UpstreamConnectionStateMachineTests.start + .hours(1), limit: .seconds(30))
                        ? .close : .none
                )
            case .close:
                (
                    false,
                    {
                        machine.close(); return .none
                    }()
                )
            case .closed: (false, machine.closed())
            }
        }
    }

    @Test("every event sequence to depth 6: never two exchanges at once, never used after closing, the facts exact")
    func sweep() {
        var failures: [String] = []
        var visited = 0
        /// `holder`: whether an exchange holds it now; `answeredSinceLease`: bytes came since the last lease.
        func walk(_ machine: Machine, _ path: [Event], holder: Bool, reused: Bool, answered: Bool) {
            visited += 1
            guard path.count < 6, failures.count < 5 else { return }
            for event in Event.allCases {
                var next = machine
                let (leased, action) = event.apply(to: &next)
                let here = path + [event]
                var holds = holder
                var isReused = reused
                var isAnswered = answered
                switch event {
                case .lease:
                    if leased && holder { failures.append("\(here): leased twice") }
                    if leased && machine.state == .closed { failures.append("\(here): a closed one leased") }
                    if leased, case .releasing = machine.state {
                        failures.append("\(here): leased before the read it was released in completed")
                    }
                    if leased {
                        // Reused means taken from the pool: it sat idle, so the upstream may have closed it.
                        if case .pooled = machine.state { isReused = true } else { isReused = false }
                        holds = true
                        isAnswered = false
                    }
                case .bytes:
                    if holder { isAnswered = true }
                    if !holder && machine.state != .closed && action != .close {
                        failures.append("\(here): bytes while nobody asked left it open")
                    }
                case .park:
                    if next.state != machine.state, case .pooled = next.state { holds = false }
                case .release:
                    if case .releasing = next.state { holds = false }
                case .readClean:
                    if case .joinPool = action, !(machine.state == .releasing(since: Self.start)) {
                        failures.append("\(here): joined the pool from \(machine.state)")
                    }
                case .readOverran:
                    if case .joinPool = action {
                        failures.append("\(here): joined the pool after bytes nobody asked for")
                    }
                    if case .releasing = machine.state, next.state != .closed {
                        failures.append("\(here): bytes after the answer left it open")
                    }
                case .closed:
                    if holder, action != .tellExchange(reused: isReused, answered: isAnswered) {
                        failures.append("\(here): \(action), wanted reused \(isReused), answered \(isAnswered)")
                    }
                    if !holder, case .tellExchange = action { failures.append("\(here): told an exchange it had none") }
                default:
                    break
                }
                if next.state == .closed { holds = false }
                walk(next, here, holder: holds, reused: isReused, answered: isAnswered)
            }
        }
        walk(Machine(), [], holder: false, reused: false, answered: false)
        #expect(failures.isEmpty, "\(failures)")
        #expect(visited > 10_000)
    }
}
