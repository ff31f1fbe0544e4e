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
        #expect(connection.received(Self.head("/a")) == .deliver(Self.head("/a")))
        connection.begin(.init(method: .POST), now: Self.start)
        let body = ByteBuffer(string: "a-body")
        #expect(connection.received(.body(body)) == .deliver(.body(body)))
        #expect(connection.received(Self.head("/b")) == .none)  // queued
        #expect(connection.received(.end(nil)) == .none)  // /b's end, behind its head
        #expect(connection.queued.count == 2)
        #expect(!connection.wantsRead(upstreamWritable: true))
        #expect(connection.nextQueued(now: Self.start) == .none)  // /b waits for /a
        #expect(Self.answerAndEnd(&connection) == .exchange(.finish(close: false)))
        #expect(connection.nextQueued(now: Self.start) == .deliver(Self.head("/b")))
        connection.begin(.init(method: .GET), now: Self.start)
        #expect(connection.nextQueued(now: Self.start) == .deliver(.end(nil)))
        #expect(connection.nextQueued(now: Self.start) == .none)
        #expect(connection.wantsRead(upstreamWritable: false))
    }

    @Test("a head that starts arriving must be complete within the head limit; a whole head clears it")
    func headLimit() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        #expect(connection.nextDeadline == Self.start + Self.limits.idle)
        let later = Self.start + .seconds(1)
        connection.readComplete(deliveredPart: false, now: later)
        #expect(connection.nextDeadline == later + Self.limits.requestHead)
        #expect(connection.deadlinesDue(now: later + .seconds(9), readsWithheld: false) == .none)
        var timedOut = connection
        let answer = timedOut.deadlinesDue(now: later + Self.limits.requestHead, readsWithheld: false)
        let problem = ProxyError.requestTimeout(detail: "The request head did not arrive within 10 s.")
        #expect(
            answer
                == .refuse(
                    .answer(.problem(problem), keepAlive: false, closeUpstream: false, then: .finished(close: true)),
                    refusal: nil))
        #expect(connection.received(Self.head("/")) == .deliver(Self.head("/")))
        #expect(connection.nextDeadline == Self.start + Self.limits.idle)
    }

    @Test("an idle connection closes at the idle limit, and the limit starts again after each exchange")
    func idleLimit() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        let done = Self.start + .seconds(100)
        #expect(Self.answerAndEnd(&connection, now: done) == .exchange(.finish(close: false)))
        #expect(connection.nextDeadline == done + Self.limits.idle)
        #expect(connection.deadlinesDue(now: done + .seconds(74), readsWithheld: false) == .none)
        #expect(connection.deadlinesDue(now: done + Self.limits.idle, readsWithheld: false) == .close(.idle))
        #expect(connection.received(Self.head("/")) == .none)
    }

    @Test("quiescing: an idle connection closes now; a busy one finishes its exchange, then closes")
    func quiescing() throws {
        var idle = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        #expect(idle.quiesce(now: Self.start) == .close(.quiescing))

        var busy = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        busy.begin(.init(method: .GET), now: Self.start)
        _ = busy.received(Self.head("/next"))
        #expect(busy.quiesce(now: Self.start) == .none)
        #expect(busy.exchange?.persistence == .close)
        #expect(Self.answerAndEnd(&busy) == .exchange(.finish(close: true)))
        #expect(busy.nextQueued(now: Self.start) == .none)  // the pipelined request is never started
    }

    @Test("after quiescing, the connection takes no further request")
    func noRequestAfterQuiescing() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        _ = connection.quiesce(now: Self.start)
        _ = Self.answerAndEnd(&connection)
        // A pipelined head queued before the close is dropped with it.
        #expect(connection.received(Self.head("/late")) == .none)
        #expect(connection.queued.isEmpty)
    }

    @Test("an unreadable request between exchanges is answered by an exchange begun for it, then the connection closes")
    func stopReadingWhenIdle() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        let refusal = ConnectionStateMachine.Refusal(problem: .headersTooLarge, label: "head_too_large")
        let answer = connection.decoderFailed(refusal, now: Self.start)
        #expect(
            answer
                == .refuse(
                    .answer(
                        .problem(.headersTooLarge), keepAlive: false, closeUpstream: false, then: .finished(close: true)
                    ),
                    refusal: "head_too_large"))
        #expect(connection.reading == .stopped)
        #expect(!connection.decodes)
        #expect(connection.exchange == nil, "the answer ends the exchange, and the connection closes after it")
        #expect(
            connection.readFailed(.headersTooLarge, now: Self.start) == .exchange(.closeConnection(closeUpstream: true))
        )
    }

    @Test("the client leaving mid-exchange reports the exchange; a tunnelled connection reports none")
    func clientClosed() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        #expect(connection.clientClosed() == .exchange(.abandon(closeUpstream: false, responseEnded: false)))
        #expect(connection.nextDeadline == nil)
        #expect(!connection.decodes)

        var tunnelled = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        tunnelled.begin(.init(method: .GET, upgrade: .webSocket), now: Self.start)
        tunnelled.tunnel()
        #expect(tunnelled.clientClosed() == .none)
        #expect(tunnelled.received(Self.head("/")) == .none)
    }

    @Test("exchanges on one connection get distinct tickets, so a late result of the first never fits the second")
    func tickets() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        let first = connection.exchangeEvent(now: Self.start) {
            $0.route(.upstream(sendsToken: true, needsToken: true, limit: .seconds(30)), now: Self.start)
        }
        let firstTicket = try #require(ExchangeScript.ticket(of: Self.exchangeAction(first)))
        _ = connection.exchangeEvent(now: Self.start) { $0.tokenFailed(firstTicket, .signInRequired(reason: "r")) }
        #expect(
            connection.exchangeEvent(now: Self.start) { $0.requestEnd(now: Self.start) }
                == .exchange(.finish(close: false)))
        connection.begin(.init(method: .GET), now: Self.start)
        let second = connection.exchangeEvent(now: Self.start) {
            $0.route(.upstream(sendsToken: true, needsToken: true, limit: .seconds(30)), now: Self.start)
        }
        let secondTicket = try #require(ExchangeScript.ticket(of: Self.exchangeAction(second)))
        #expect(firstTicket != secondTicket)
        #expect(connection.exchange?.awaits(firstTicket) == false)
        let late = connection.exchangeEvent(now: Self.start) { $0.tokenArrived(firstTicket) }
        #expect(late == .exchange(.none))
    }

    @Test("a head while an exchange is in progress is counted and closes")
    func illegalEvents() {
        var busy = ConnectionStateMachine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        #expect(busy.begin(.init(method: .GET), now: Self.start) == .none)
        #expect(busy.begin(.init(method: .GET), now: Self.start) == .close(.illegalEvent))
        #expect(busy.illegalEvents == 1)
    }

    @Test("a request that does not keep the connection ends reading once it has ended, whatever event ended it")
    func readingEndsAfterLastRequest() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .POST, keepAlive: false), now: Self.start)
        let connect = connection.exchangeEvent(now: Self.start) {
            $0.route(.upstream(sendsToken: false, needsToken: false, limit: .seconds(30)), now: Self.start)
        }
        let ticket = try #require(ExchangeScript.ticket(of: Self.exchangeAction(connect)))
        _ = connection.exchangeEvent(now: Self.start) { $0.connected(ticket, now: Self.start) }
        #expect(connection.reading == .open, "its body still streams")
        _ = connection.exchangeEvent(now: Self.start) { $0.requestEnd(now: Self.start) }
        #expect(connection.reading == .ended)
        #expect(connection.decodes, "what follows is still decoded, so a malformed message is counted")
        #expect(connection.received(Self.head("/next")) == .none)
        #expect(connection.queued.isEmpty)
        let ignored = connection.decoderFailed(.init(problem: .badRequest(detail: "x"), label: "x"), now: Self.start)
        #expect(ignored == .none, "a malformed message after the last request is no one's")
        #expect(connection.reading == .stopped)
    }

    @Test("a later pipelined request's refusal waits for its turn, and is answered with its own label")
    func refusalInItsTurn() throws {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET), now: Self.start)
        _ = connection.exchangeEvent(now: Self.start) { $0.route(.local, now: Self.start) }
        let ask = connection.exchangeEvent(now: Self.start) { $0.requestEnd(now: Self.start) }
        let ticket = try #require(ExchangeScript.ticket(of: Self.exchangeAction(ask)))
        #expect(connection.received(Self.head("/b")) == .none)
        #expect(connection.received(.body(ByteBuffer(string: "half"))) == .none)
        let refusal = ConnectionStateMachine.Refusal(problem: .badRequest(detail: "bad chunk"), label: "bad_chunk")
        #expect(connection.decoderFailed(refusal, now: Self.start) == .none)
        #expect(connection.reading == .refusalWaiting(refusal))
        #expect(connection.queued.isEmpty, "the refused request's own head never reaches an upstream")
        #expect(!connection.decodes)
        #expect(connection.closeIfIdle() == .none)
        let answered = connection.exchangeEvent(now: Self.start) { $0.localAnswer(ticket, .response(Self.noContent)) }
        #expect(Self.exchangeAction(answered).endsExchange == false, "the connection stays for the refusal's turn")
        let answer = connection.nextQueued(now: Self.start)
        guard case .refuse(.answer(.problem(let problem), _, _, _), let label) = answer else {
            Issue.record("the refusal is answered in its turn: \(answer)")
            return
        }
        #expect(problem == refusal.problem && label == "bad_chunk")
        #expect(connection.reading == .stopped)
        #expect(connection.nextQueued(now: Self.start) == .none)
    }

    @Test("a lingering connection decodes nothing, answers nothing, and has no deadline of its own")
    func lingering() {
        var connection = ConnectionStateMachine(limits: Self.limits, now: Self.start)
        connection.begin(.init(method: .GET, keepAlive: false), now: Self.start)
        #expect(Self.answerAndEnd(&connection) == .exchange(.finish(close: true)))
        connection.linger()
        #expect(connection.isLingering)
        #expect(!connection.decodes)
        #expect(connection.nextDeadline == nil)
        #expect(connection.received(Self.head("/")) == .none)
        #expect(connection.wantsRead(upstreamWritable: false))
        #expect(connection.deadlinesDue(now: Self.start + .hours(1), readsWithheld: false) == .none)
    }

    /// A connection whose exchange sent its request upstream and waits for the response head.
    static func awaitingHead(kept: Bool = true) throws -> ConnectionStateMachine {
        var connection = ConnectionStateMachine(limits: limits, now: start)
        connection.begin(.init(method: .GET), now: start)
        let connect = connection.exchangeEvent(now: start) {
            $0.route(.upstream(sendsToken: true, needsToken: false, limit: .seconds(30)), now: start)
        }
        let ticket = try #require(ExchangeScript.ticket(of: exchangeAction(connect)))
        _ = connection.exchangeEvent(now: start) { $0.requestEnd(now: start) }
        _ = connection.exchangeEvent(now: start) { $0.connected(ticket, now: start) }
        return connection
    }

    @Test(
        "what an answer means for the token leaves with the exchange's action, decided after it, never for a refused head"
    )
    func tokenEffectsAreActions() throws {
        let ok = ExchangeScript.responseHead(.ok)
        let discovered = TokenVerdict.Route.discovered(usesAccount: false, stepsUp: false)

        // A bearer route's 200: nothing to hear, the plain action.
        var bearer = try Self.awaitingHead()
        let plain = bearer.responseHead(
            ok, endsWithConnection: false,
            verdict: TokenVerdict.decide(status: .ok, headers: [:], route: .bearer, granted: []), now: Self.start)
        #expect(plain == .exchange(.forwardResponseHead(ok, keepAlive: true)))

        // A discovered route's 200: its flow hears the token was answered, with the head's forwarding.
        var answered = try Self.awaitingHead()
        let verdict = TokenVerdict.decide(status: .ok, headers: [:], route: discovered, granted: [])
        #expect(
            answered.responseHead(ok, endsWithConnection: false, verdict: verdict, now: Self.start)
                == .responseHead(.forwardResponseHead(ok, keepAlive: true), token: .answered, stepUpAnswered: false))

        // A step-up the route does not make itself: the token is dropped and the problem answered, counted.
        var forbidden = try Self.awaitingHead()
        let insufficient = UpstreamResponse(
            HTTPResponseHead(
                version: .http1_1, status: .forbidden,
                headers: ["www-authenticate": #"Bearer error="insufficient_scope", scope="read write""#]))
        let stepUp = TokenVerdict.decide(
            status: .forbidden, headers: insufficient.headers, route: discovered, granted: ["read"])
        let action = forbidden.responseHead(insufficient, endsWithConnection: false, verdict: stepUp, now: Self.start)
        guard case .responseHead(.answer(.failure(.insufficientScope), _, _, _), let token, true) = action else {
            Issue.record("a step-up answered with the problem: \(action)")
            return
        }
        #expect(token == stepUp.tokenEffect)
        #expect(token != .none)

        // A head the exchange cannot take (none was asked for): aborted, and the token source hears nothing.
        var unasked = ConnectionStateMachine(limits: Self.limits, now: Self.start, assertsOnIllegalEvents: false)
        unasked.begin(.init(method: .GET), now: Self.start)
        #expect(
            unasked.responseHead(ok, endsWithConnection: false, verdict: verdict, now: Self.start) == .exchange(.abort))
    }

    static let noContent = LocalResponse(status: .noContent, contentType: "text/plain", body: ByteBuffer())

    /// Answers the exchange in progress at once (as a CORS preflight is), then ends its request: returns the
    /// action that ends the exchange, with the connection's decision in it.
    static func answerAndEnd(
        _ connection: inout ConnectionStateMachine, now: NIODeadline = start
    ) -> ConnectionStateMachine.Action {
        _ = connection.exchangeEvent(now: now) { $0.route(.answer(.response(noContent)), now: now) }
        return connection.exchangeEvent(now: now) { $0.requestEnd(now: now) }
    }

    /// The exchange's action inside a connection action.
    static func exchangeAction(_ action: ConnectionStateMachine.Action) -> ExchangeStateMachine.Action {
        guard case .exchange(let inner) = action else { return .abort }
        return inner
    }
}
