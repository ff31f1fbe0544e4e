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

/// Every transition of one exchange, without a socket: the events a handler would feed, the actions it would
/// perform, and the state in between.
@Suite("Exchange state machine: one exchange's transitions, pure")
struct ExchangeStateMachineTests {
    typealias Action = ExchangeStateMachine.Action

    @Test("a GET with a cached token: connect, send head and end, forward the head, park the connection, finish")
    func cachedTokenGet() throws {
        var script = ExchangeScript()
        let connect = script.proxied()
        let ticket = try #require(ExchangeScript.ticket(of: connect))
        #expect(connect == .connect(ticket))
        #expect(script.end() == .none)  // no connection yet: the end waits in the upload
        #expect(script.stateName == "connecting")
        #expect(script.connected(ticket) == .sendRequest(body: [], end: true))
        #expect(script.stateName == "streaming(ended, awaitingHead)")
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.routeLimit)
        #expect(script.head(.ok) == script.forwarded(keepAlive: true))
        #expect(script.machine.forwardsResponseBody)
        #expect(script.machine.nextDeadline == nil)
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: false)))
        #expect(script.stateName == "finished")
    }

    @Test("no cached token: fetch it; a token for another step is ignored; the right one connects")
    func tokenWait() throws {
        var script = ExchangeScript()
        let fetch = script.proxied(needsToken: true)
        let ticket = try #require(ExchangeScript.ticket(of: fetch))
        #expect(fetch == .fetchToken(ticket, claims: nil))
        #expect(script.machine.awaits(ticket))
        let stale = ExchangeStateMachine.Ticket(exchange: ticket.exchange + 1, attempt: ticket.attempt)
        #expect(!script.machine.awaits(stale))
        #expect(script.machine.tokenArrived(stale) == .none)
        #expect(script.stateName == "awaitingToken")
        #expect(script.machine.tokenArrived(ticket) == .connect(ticket))
        #expect(script.stateName == "connecting")
    }

    @Test("body parts that arrive before the connection wait in the upload, and go with the head")
    func pendingBody() throws {
        var script = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        #expect(script.body("ab") == .none)
        #expect(script.body("cd") == .none)
        #expect(
            script.connected(ticket)
                == .sendRequest(body: [ByteBuffer(string: "ab"), ByteBuffer(string: "cd")], end: false))
        #expect(script.stateName == "streaming(streaming, awaitingHead)")
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.bodyStall)
        #expect(script.body("ef") == .forwardBody(ByteBuffer(string: "ef")))
        #expect(script.end() == .forwardEnd)
        #expect(script.stateName == "streaming(ended, awaitingHead)")
    }

    @Test("an early answer while the upload streams: the head goes out, the connection is closed, the rest dropped")
    func earlyAnswer() throws {
        var script = ExchangeScript(.init(method: .PUT))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        _ = script.body("part")
        #expect(script.head(.payloadTooLarge) == script.forwarded(keepAlive: true))
        // Request bytes are still unsent: that upstream connection cannot be reused (data-plane pitfall 5).
        #expect(script.responseEnd() == ExchangeScript.finish(.close, then: .awaitingRequestEnd))
        #expect(script.stateName == "answered")
        #expect(script.body("more") == .none)
        #expect(script.machine.wantsRead(upstreamWritable: false))
        #expect(script.end() == .finish(close: false))
    }

    @Test("an early answer to Expect: 100-continue without a 100 closes the connection after it")
    func earlyAnswerToExpectation() throws {
        var script = ExchangeScript(.init(method: .PUT, expectsContinue: true))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        #expect(script.head(.unauthorized) == script.forwarded(keepAlive: false))
        // Nothing is read after it: the body it announced may never come (#21 item 3).
        #expect(script.responseEnd() == ExchangeScript.finish(.close, then: .finished(close: true)))
        #expect(script.stateName == "finished")
    }

    @Test("after a relayed 100 Continue the body flows and the connection stays open")
    func continued() throws {
        var script = ExchangeScript(.init(method: .PUT, expectsContinue: true))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        #expect(script.head(.continue) == .forwardInformational(.continue))
        #expect(script.machine.expectation == .continued)
        _ = script.body("x")
        #expect(script.end() == .forwardEnd)
        #expect(script.head(.created) == script.forwarded(keepAlive: true))
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: false)))
    }

    @Test("an HTTP/1.0 client gets no 1xx (RFC 9110 §15.2)")
    func noInformationalToHTTP10() throws {
        var script = ExchangeScript(.init(method: .GET, keepAlive: false, forwardsInformational: false))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.continue) == .none)
        #expect(script.head(.ok) == script.forwarded(keepAlive: false))
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: true)))
    }

    @Test("the client leaves while connecting: nothing to close, and the late connection is parked")
    func clientLeavesWhileConnecting() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        #expect(script.machine.clientClosed() == .abandon(closeUpstream: false, responseEnded: false))
        #expect(script.connected(ticket) == .parkConnection)
    }

    @Test("the client leaves mid-response: the upstream connection is closed, the exchange counts as unfinished")
    func clientLeavesMidResponse() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.ok)
        #expect(script.machine.clientClosed() == .abandon(closeUpstream: true, responseEnded: false))
        #expect(script.stateName == "finished")
        #expect(script.responseEnd() == .none)
    }

    /// The upstream connection closed before the response head; `neverProcessed` is the transport's word that the
    /// request reached no application (for HTTP/1.1: a pooled connection closed before any byte of an answer,
    /// proven on real sockets by `StaleConnectionTests`).
    struct StaleCase: CustomTestStringConvertible, Sendable {
        let name: String
        let method: HTTPMethod
        let neverProcessed: Bool
        let body: Bool
        let replays: Bool
        var testDescription: String { name }
    }

    @Test(
        "the upstream closes before the response head: replayed once only when provably unprocessed and repeatable",
        arguments: [
            StaleCase(name: "never processed, GET", method: .GET, neverProcessed: true, body: false, replays: true),
            StaleCase(
                name: "never processed, DELETE", method: .DELETE, neverProcessed: true, body: false, replays: true),
            StaleCase(name: "maybe processed", method: .GET, neverProcessed: false, body: false, replays: false),
            StaleCase(
                name: "POST is not idempotent", method: .POST, neverProcessed: true, body: false, replays: false),
            StaleCase(name: "a body was sent", method: .PUT, neverProcessed: true, body: true, replays: false),
        ])
    func staleConnection(_ stale: StaleCase) throws {
        var script = ExchangeScript(.init(method: stale.method))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        if stale.body { _ = script.body("x") }
        _ = script.end()
        let action = script.machine.upstreamClosed(neverProcessed: stale.neverProcessed)
        guard stale.replays else {
            #expect(action == Self.failed(.upstreamClosed(.reset), closeUpstream: true))
            return
        }
        let again = try #require(ExchangeScript.ticket(of: action))
        #expect(again != ticket)
        #expect(action == .connect(again))
        #expect(script.connected(again) == .sendRequest(body: [], end: true))
        // Only once.
        #expect(
            script.machine.upstreamClosed(neverProcessed: true)
                == Self.failed(.upstreamClosed(.reset), closeUpstream: true))
    }

    @Test("the upstream closes after the response head: the client connection closes (nothing else is honest)")
    func upstreamClosesMidResponse() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.ok)
        #expect(script.machine.upstreamClosed(neverProcessed: false) == .closeConnection(closeUpstream: false))
        #expect(script.stateName == "closing")
        #expect(script.machine.clientClosed() == .abandon(closeUpstream: false, responseEnded: false))
    }

    @Test("a 401 invalid_token: the answer is dropped, the kept body goes again with a new token, once")
    func tokenReplay() throws {
        var script = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.body("ab")
        _ = script.connected(ticket)
        _ = script.body("cd")
        _ = script.end()
        #expect(script.head(.unauthorized, retry: .refresh) == .none)
        #expect(script.stateName == "discardingRejection")
        #expect(!script.machine.forwardsResponseBody)
        let replay = script.responseEnd()
        let second = try #require(ExchangeScript.ticket(of: replay))
        #expect(replay == .replayWithNewToken(release: .park, retry: .refresh, ticket: second))
        #expect(script.stateName == "awaitingToken")
        #expect(script.machine.tokenArrived(second) == .connect(second))
        #expect(
            script.connected(second)
                == .sendRequest(body: [ByteBuffer(string: "ab"), ByteBuffer(string: "cd")], end: true))
        // The second 401 passes through.
        #expect(script.head(.unauthorized, retry: .refresh) == script.forwarded(keepAlive: true))
    }

    @Test("a 401 whose body does not end within the route's limit is forwarded as it came, with what was read of it")
    func rejectionPastTheLimit() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.unauthorized, retry: .refresh) == .none)
        #expect(script.machine.responseBody(ByteBuffer(string: "drip")) == .none)
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.routeLimit)
        script.advance(ExchangeScript.routeLimit - .milliseconds(1))
        #expect(script.timer() == .none, "not before the limit")
        script.advance(.milliseconds(1))
        #expect(
            script.timer() == .forwardRejection(script.lastHead!, keepAlive: true, body: [ByteBuffer(string: "drip")]))
        #expect(script.stateName == "streaming(ended, streaming)")
        #expect(
            script.machine.responseBody(ByteBuffer(string: "more")) == .forwardResponseBody(ByteBuffer(string: "more")))
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: false)))
    }

    @Test("a 401 whose body is larger than the replay buffer is forwarded at once, nothing of it lost")
    func rejectionTooLarge() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.unauthorized, retry: .refresh) == .none)
        let half = ByteBuffer(repeating: 0x61, count: ExchangeStateMachine.replayLimit / 2)
        #expect(script.machine.responseBody(half) == .none)
        #expect(script.machine.responseBody(half) == .none, "at the limit it is still kept")
        let over = ByteBuffer(string: "b")
        #expect(
            script.machine.responseBody(over)
                == .forwardRejection(script.lastHead!, keepAlive: true, body: [half, half, over]))
    }

    @Test("a discovered route's 401 or step-up 403 past the limit is answered by the proxy; its connection closes")
    func discoveredRejectionPastTheLimit() throws {
        var refused = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: refused.proxied()))
        _ = refused.end()
        _ = refused.connected(ticket)
        #expect(refused.head(.unauthorized, retry: .refresh, signsInItself: true) == .none)
        refused.advance(ExchangeScript.routeLimit)
        #expect(
            refused.timer()
                == .answer(
                    .failure(.tokenRefused(note: "its answer did not end within the route's limit")), keepAlive: true,
                    closeUpstream: true, then: .finished(close: false)))
        var stepUp = ExchangeScript()
        let second = try #require(ExchangeScript.ticket(of: stepUp.proxied()))
        _ = stepUp.end()
        _ = stepUp.connected(second)
        #expect(stepUp.head(.forbidden, retry: .stepUp(["s"]), stepUp: ["s"]) == .none)
        let big = ByteBuffer(repeating: 0x61, count: ExchangeStateMachine.replayLimit + 1)
        #expect(
            stepUp.machine.responseBody(big)
                == .answer(
                    .failure(
                        .insufficientScope(
                            scopes: ["s"], note: "its answer was too large to read before sending it again")),
                    keepAlive: true, closeUpstream: true, then: .finished(close: false)))
    }

    @Test("a discovered route's 403 insufficient_scope is answered by the proxy; its upstream connection closes")
    func stepUp() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(
            script.head(.forbidden, stepUp: ["a", "b"])
                == .answer(
                    .failure(.insufficientScope(scopes: ["a", "b"])), keepAlive: true, closeUpstream: true,
                    then: .finished(close: false)))
        #expect(script.stateName == "finished")
    }

    @Test("a 401 insufficient_claims replays with the claims; a closing upstream is not parked")
    func claimsReplay() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.unauthorized, keepAlive: false, retry: .claims("{}")) == .none)
        let replay = script.responseEnd()
        let second = try #require(ExchangeScript.ticket(of: replay))
        #expect(replay == .replayWithNewToken(release: .close, retry: .claims("{}"), ticket: second))
    }

    @Test("a 401 passes through when the body outgrew the kept copy, the route sends no token, or the upload is on")
    func noReplay() throws {
        var large = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: large.proxied()))
        _ = large.connected(ticket)
        #expect(large.body(String(repeating: "x", count: ExchangeStateMachine.replayLimit + 1)) != .none)
        #expect(large.machine.kept == .tooLarge)
        _ = large.end()
        #expect(large.head(.unauthorized, retry: .refresh) == large.forwarded(keepAlive: true))

        var tokenless = ExchangeScript()
        let other = try #require(ExchangeScript.ticket(of: tokenless.proxied(sendsToken: false)))
        _ = tokenless.end()
        _ = tokenless.connected(other)
        #expect(tokenless.head(.unauthorized, retry: .refresh) == tokenless.forwarded(keepAlive: true))

        var uploading = ExchangeScript(.init(method: .POST))
        let third = try #require(ExchangeScript.ticket(of: uploading.proxied()))
        _ = uploading.connected(third)
        #expect(uploading.head(.unauthorized, retry: .refresh) == uploading.forwarded(keepAlive: true))
    }

    @Test("the upstream closes while its rejected answer is being dropped: answered as a reset")
    func closeWhileDiscarding() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.unauthorized, retry: .refresh)
        #expect(
            script.machine.upstreamClosed(neverProcessed: false, cause: .invalidResponse("bad"))
                == Self.failed(.upstreamClosed(.invalidResponse("bad")), closeUpstream: true))
        #expect(script.stateName == "finished")
    }

    @Test("a pipelined request's exchange: a response end without a head is a protocol error")
    func endWithoutHead() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.responseEnd() == Self.failed(.responseWithoutHead, closeUpstream: true))
    }

    @Test("the proxy's own answer: after the request it finishes; during the upload it waits for the end")
    func ownAnswers() throws {
        let starting = ExchangeStateMachine.Answer.problem(.starting)
        var ended = ExchangeScript()
        _ = ended.machine.route(.local, now: ended.now)
        let ticket = try #require(ExchangeScript.ticket(of: ended.end()))
        #expect(
            ended.machine.localAnswer(ticket, starting)
                == .answer(starting, keepAlive: true, closeUpstream: false, then: .finished(close: false)))

        var uploading = ExchangeScript(.init(method: .POST))
        #expect(
            uploading.machine.route(.answer(starting), now: uploading.now)
                == .answer(starting, keepAlive: true, closeUpstream: false, then: .awaitingRequestEnd))
        #expect(uploading.body("dropped") == .none)
        #expect(uploading.end() == .finish(close: false))

        // A client still waiting for 100 may never send its body: the answer closes the connection (#21 item 3).
        var expecting = ExchangeScript(.init(method: .POST, expectsContinue: true))
        #expect(
            expecting.machine.route(.answer(starting), now: expecting.now)
                == .answer(starting, keepAlive: false, closeUpstream: false, then: .finished(close: true)))

        var notKept = ExchangeScript(.init(method: .GET, keepAlive: false))
        #expect(
            notKept.machine.route(.answer(starting), now: notKept.now)
                == .answer(starting, keepAlive: false, closeUpstream: false, then: .awaitingRequestEnd))
        #expect(notKept.end() == .finish(close: true))

        // A refusal reads nothing after the head: answered as if the request had ended, then the connection closes.
        var refused = ExchangeScript(.init(method: .POST))
        #expect(
            refused.machine.route(.refuse(.noRoute(path: "/x")), now: refused.now)
                == .answer(
                    .problem(.noRoute(path: "/x")), keepAlive: false, closeUpstream: false, then: .finished(close: true)
                ))
    }

    @Test("a failure once the response is underway closes the connection instead of answering")
    func failureMidResponse() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.ok)
        #expect(
            script.machine.deadlinesDue(now: script.now + .hours(1), readsWithheld: false) == .none,
            "no deadline applies once the head is out and the request has ended")
        #expect(script.machine.readFailed(.headersTooLarge) == .closeConnection(closeUpstream: true))
        #expect(script.machine.readFailed(.headersTooLarge) == .closeConnection(closeUpstream: false))
    }

    @Test("a failure while waiting for the head closes the upstream connection and answers")
    func failureBeforeHead() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(
            script.machine.deadlinesDue(now: script.now + ExchangeScript.routeLimit, readsWithheld: false)
                == Self.failed(.responseHeadTimedOut, closeUpstream: true))
        #expect(script.connected(ticket) == .parkConnection)
    }

    @Test("a failed token or connection is answered, unless its ticket is stale")
    func tokenAndConnectFailures() throws {
        var waiting = ExchangeScript()
        let fetch = try #require(ExchangeScript.ticket(of: waiting.proxied(needsToken: true)))
        let stale = ExchangeStateMachine.Ticket(exchange: fetch.exchange, attempt: fetch.attempt + 1)
        #expect(waiting.machine.tokenFailed(stale, .signInRequired(reason: "r")) == .none)
        #expect(waiting.end() == .none)
        #expect(
            waiting.machine.tokenFailed(fetch, .signInRequired(reason: "r"))
                == Self.failed(.token(.signInRequired(reason: "r")), closeUpstream: false))

        var connecting = ExchangeScript()
        let connect = try #require(ExchangeScript.ticket(of: connecting.proxied()))
        _ = connecting.end()
        #expect(connecting.machine.connectFailed(stale, .refused) == .none)
        #expect(
            connecting.machine.connectFailed(connect, .refused)
                == Self.failed(.upstreamUnreachable(.refused), closeUpstream: false))
        #expect(connecting.machine.connectFailed(connect, .refused) == .none, "answered once")
    }

    @Test("an event that cannot happen in the state it arrives in is counted and closes, never a hang")
    func illegalEvents() throws {
        var script = ExchangeScript()
        script.machine = ExchangeStateMachine(
            serial: 1, request: .init(method: .GET), now: ExchangeScript.start, bodyStall: ExchangeScript.bodyStall,
            assertsOnIllegalEvents: false)
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        // A response part before any connection was sent the request.
        #expect(script.responseEnd() == .abort)
        #expect(script.machine.illegalEvents == 1)
        #expect(script.stateName == "closing")
        #expect(script.connected(ticket) == .parkConnection, "a late connection is still kept, never leaked")
        #expect(script.machine.clientClosed() == .abandon(closeUpstream: false, responseEnded: false))

        var second = ExchangeStateMachine(
            serial: 2, request: .init(method: .POST), now: ExchangeScript.start, bodyStall: ExchangeScript.bodyStall,
            assertsOnIllegalEvents: false)
        _ = second.route(.local, now: ExchangeScript.start)
        #expect(second.route(.local, now: ExchangeScript.start) == .abort, "routed twice")
        #expect(second.illegalEvents == 1)
    }

    @Test("quiescing mid-exchange: the exchange finishes, then the connection closes")
    func quiescing() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.machine.quiesce() == .none)
        #expect(script.head(.ok) == script.forwarded(keepAlive: false))
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: true)))
    }

    @Test("a response framed by the connection's close closes the client connection too")
    func untilClose() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.ok, keepAlive: false, endsWithConnection: true) == script.forwarded(keepAlive: false))
        #expect(script.responseEnd() == ExchangeScript.finish(.close, then: .finished(close: true)))
    }

    @Test("a local endpoint: the body is consumed, the end asks for the answer, then it is written")
    func local() throws {
        var script = ExchangeScript(.init(method: .POST))
        #expect(script.machine.route(.local, now: script.now) == .none)
        #expect(script.body("abc") == .consumeLocally(ByteBuffer(string: "abc")))
        let ask = script.end()
        let ticket = try #require(ExchangeScript.ticket(of: ask))
        #expect(ask == .answerLocally(ticket))
        #expect(script.machine.awaits(ticket))
        let answer = ExchangeStateMachine.Answer.response(
            LocalResponse(status: .ok, contentType: "text/plain", body: ByteBuffer(string: "ok")))
        #expect(
            script.machine.localAnswer(ticket, answer)
                == .answer(answer, keepAlive: true, closeUpstream: false, then: .finished(close: false)))
        #expect(!script.machine.awaits(ticket))
        #expect(script.machine.localAnswer(ticket, answer) == .none, "answered once")
    }

    /// What a failure's answer looks like in states where the request has ended and the connection is kept.
    static func failed(_ failure: ExchangeStateMachine.Failure, closeUpstream: Bool) -> Action {
        .answer(.failure(failure), keepAlive: true, closeUpstream: closeUpstream, then: .finished(close: false))
    }
}
