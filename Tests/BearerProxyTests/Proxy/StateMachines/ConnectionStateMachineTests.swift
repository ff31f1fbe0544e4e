import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1
import Testing

/// The client connection's transitions: pipelining, the head and idle limits, quiescing, the tunnel.
@Suite("Connection state machine: pipelining, limits, quiescing, pure")
struct ConnectionStateMachineTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let limits = ConnectionStateMachine.Limits(
        idle: .seconds(75), requestHead: .seconds(10), bodyStall: .seconds(60))

    static func head(_ uri: String) -> ClientRequestPart {
        .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri))
    }

    @Test("a pipelined request waits behind a streaming one, then its parts are delivered in order")
    func pipelined() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        #expect(connection.received(Self.head("/a")) == .deliver)
        connection.begin(.init(method: .POST), now: Self.start)
        #expect(connection.received(.body(ByteBuffer(string: "a-body"))) == .deliver)
        #expect(connection.received(Self.head("/b")) == .queue)
        #expect(connection.received(.end(nil)) == .queue)  // /b's end, behind its head
        #expect(!connection.wantsRead(upstreamWritable: true))
        #expect(connection.nextQueuedPart() == nil)  // /b waits for /a
        #expect(connection.exchangeFinished(close: false, now: Self.start) == .awaitRequest)
        #expect(connection.nextQueuedPart() == Self.head("/b"))
        connection.begin(.init(method: .GET), now: Self.start)
        #expect(connection.nextQueuedPart() == .end(nil))
        #expect(connection.nextQueuedPart() == nil)
        #expect(connection.wantsRead(upstreamWritable: false))
    }

    @Test("a head that starts arriving must be complete within the head limit; a whole head clears it")
    func headLimit() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        #expect(connection.nextDeadline == Self.start + Self.limits.idle)
        let later = Self.start + .seconds(1)
        connection.readComplete(deliveredPart: false, now: later)
        #expect(connection.nextDeadline == later + Self.limits.requestHead)
        #expect(connection.idleDeadlinesDue(now: later + .seconds(9)) == .none)
        #expect(connection.idleDeadlinesDue(now: later + Self.limits.requestHead) == .requestHeadTimedOut)
        #expect(connection.received(Self.head("/")) == .deliver)
        #expect(connection.nextDeadline == Self.start + Self.limits.idle)
    }

    @Test("an idle connection closes at the idle limit, and the limit starts again after each exchange")
    func idleLimit() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        let done = Self.start + .seconds(100)
        #expect(connection.exchangeFinished(close: false, now: done) == .awaitRequest)
        #expect(connection.nextDeadline == done + Self.limits.idle)
        #expect(connection.idleDeadlinesDue(now: done + .seconds(74)) == .none)
        #expect(connection.idleDeadlinesDue(now: done + Self.limits.idle) == .closeIdle)
        #expect(connection.received(Self.head("/")) == .drop)
    }

    @Test("quiescing: an idle connection closes now; a busy one finishes its exchange, then closes")
    func quiescing() throws {
        var idle = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        let closesNow = idle.quiesce()
        #expect(closesNow)

        var busy = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        busy.begin(.init(method: .GET), now: Self.start)
        _ = busy.received(Self.head("/next"))
        let busyClosesNow = busy.quiesce()
        #expect(!busyClosesNow)
        #expect(busy.exchange?.persistence == .close)
        #expect(busy.exchangeFinished(close: false, now: Self.start) == .close)
        #expect(busy.nextQueuedPart() == nil)  // the pipelined request is never started
    }

    @Test("after quiescing, the connection takes no further request")
    func noRequestAfterQuiescing() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        _ = connection.quiesce()
        _ = connection.exchangeFinished(close: false, now: Self.start)
        // A pipelined head queued before the close is dropped with it.
        #expect(connection.received(Self.head("/late")) == .drop)
    }

    @Test("an unreadable request between exchanges is answered by an exchange begun for it, then the connection closes")
    func stopReadingWhenIdle() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        let answer = connection.readFailed(.headersTooLarge, now: Self.start)
        #expect(
            answer
                == .answer(
                    .problem(.headersTooLarge), keepAlive: false, closeUpstream: false, then: .finished(close: true)))
        #expect(connection.readingEnded)
        #expect(connection.exchangeFinished(close: true, now: Self.start) == .close)
        #expect(connection.readFailed(.headersTooLarge, now: Self.start) == .closeConnection(closeUpstream: true))
    }

    @Test("the client leaving mid-exchange reports the exchange; a tunnelled connection reports none")
    func clientClosed() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        #expect(connection.clientClosed() == .abandon(closeUpstream: false, responseEnded: false))
        #expect(connection.nextDeadline == nil)

        var tunnelled = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        tunnelled.begin(.init(method: .GET, upgrade: .webSocket), now: Self.start)
        tunnelled.tunnel()
        #expect(tunnelled.clientClosed() == ExchangeStateMachine.Action.none)
        #expect(tunnelled.received(Self.head("/")) == .drop)
    }

    @Test("exchanges on one connection get distinct tickets, so a late result of the first never fits the second")
    func tickets() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        let first = connection.exchangeEvent {
            $0.route(.upstream(sendsToken: true, needsToken: true, limit: .seconds(30)), now: Self.start)
        }
        let firstTicket = try #require(ExchangeScript.ticket(of: first))
        _ = connection.exchangeEvent { $0.tokenFailed(firstTicket, .signInRequired(reason: "r")) }
        _ = connection.exchangeFinished(close: false, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        let second = connection.exchangeEvent {
            $0.route(.upstream(sendsToken: true, needsToken: true, limit: .seconds(30)), now: Self.start)
        }
        let secondTicket = try #require(ExchangeScript.ticket(of: second))
        #expect(firstTicket != secondTicket)
        #expect(connection.exchange?.awaits(firstTicket) == false)
        let late = connection.exchangeEvent { $0.tokenArrived(firstTicket) }
        #expect(late == ExchangeStateMachine.Action.none)
    }

    @Test("a head while an exchange is in progress, or an exchange's end with none, is counted and closes")
    func illegalEvents() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        #expect(connection.exchangeFinished(close: false, now: Self.start) == .close)
        #expect(connection.illegalEvents == 1)

        var busy = ConnectionStateMachine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        let first = busy.begin(.init(method: .GET), now: Self.start)
        let second = busy.begin(.init(method: .GET), now: Self.start)
        #expect(first && !second)
        #expect(busy.illegalEvents == 1)
    }

    @Test("a request that does not keep the connection ends reading once it has ended, whatever event ended it")
    func readingEndsAfterLastRequest() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .POST, keepAlive: false), now: Self.start)
        let connect = connection.exchangeEvent {
            $0.route(.upstream(sendsToken: false, needsToken: false, limit: .seconds(30)), now: Self.start)
        }
        let ticket = try #require(ExchangeScript.ticket(of: connect))
        _ = connection.exchangeEvent { $0.connected(ticket, now: Self.start) }
        #expect(!connection.readingEnded, "its body still streams")
        _ = connection.exchangeEvent { $0.requestEnd(now: Self.start) }
        #expect(connection.readingEnded)
        #expect(connection.received(Self.head("/next")) == .drop)
    }
}
