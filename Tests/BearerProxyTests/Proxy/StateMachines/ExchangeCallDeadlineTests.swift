import NIOCore
import NIOHTTP1
import Testing

@testable import BearerDataPlane

/// A gRPC call's own deadline (`grpc-timeout`): it bounds the proxy's wait for the upstream's answer — token,
/// connection, response head — and nothing after the answer began.
@Suite("Exchange state machine: the client's own deadline for a call, pure")
struct ExchangeCallDeadlineTests {
    static let callLimit = TimeAmount.milliseconds(250)

    static func deadlinePassed(closeUpstream: Bool, then: ExchangeStateMachine.AfterResponse) -> Action {
        .answer(
            .failure(.callDeadlinePassed(callLimit)), keepAlive: true, closeUpstream: closeUpstream, then: then)
    }

    typealias Action = ExchangeStateMachine.Action

    @Test("a token that does not come by the call's deadline: DEADLINE_EXCEEDED then, not at the route's limit")
    func tokenWait() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: Self.callLimit))
        _ = script.proxied(needsToken: true)
        _ = script.end()
        #expect(script.machine.nextDeadline == ExchangeScript.start + Self.callLimit)
        script.advance(Self.callLimit - .milliseconds(1))
        #expect(script.timer() == .none)
        script.advance(.milliseconds(1))
        #expect(script.timer() == Self.deadlinePassed(closeUpstream: false, then: .finished(close: false)))
    }

    @Test("a connection that does not come by the call's deadline: answered, the late connection not used")
    func connecting() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: Self.callLimit))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        #expect(script.machine.nextDeadline == ExchangeScript.start + Self.callLimit)
        script.advance(Self.callLimit)
        #expect(script.timer() == Self.deadlinePassed(closeUpstream: false, then: .finished(close: false)))
        #expect(script.connected(ticket) == .parkConnection)
    }

    @Test("no response head by the call's deadline, the request sent in full: answered, the upstream request abandoned")
    func responseHead() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: Self.callLimit))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.machine.nextDeadline == ExchangeScript.start + Self.callLimit)
        script.advance(Self.callLimit)
        #expect(script.timer() == Self.deadlinePassed(closeUpstream: true, then: .finished(close: false)))
    }

    @Test("no response head by the call's deadline while the request still streams up (a client-streaming call)")
    func responseHeadWhileStreaming() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: Self.callLimit))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        _ = script.body("message")
        // The route's limit starts only once the request is up in full; the call's deadline runs from its head.
        #expect(script.machine.nextDeadline == ExchangeScript.start + Self.callLimit)
        script.advance(Self.callLimit)
        #expect(script.timer() == Self.deadlinePassed(closeUpstream: true, then: .awaitingRequestEnd))
    }

    @Test("the route's limit, when it is the shorter, still applies")
    func routeLimitFirst() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: .seconds(3600)))
        _ = script.proxied(needsToken: true)
        _ = script.end()
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.routeLimit)
        script.advance(ExchangeScript.routeLimit)
        #expect(
            script.timer()
                == .answer(
                    .failure(.tokenWaitTimedOut), keepAlive: true, closeUpstream: false, then: .finished(close: false)))
    }

    @Test("once the answer began, the call's deadline is the client's and the server's business, not the proxy's")
    func afterTheHead() throws {
        var script = ExchangeScript(.init(method: .POST, callLimit: Self.callLimit))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.ok)
        #expect(script.machine.nextDeadline == nil)
        script.advance(Self.callLimit + .seconds(1))
        #expect(script.timer() == .none)
        #expect(script.stateName == "streaming(ended, streaming)")
    }

    @Test("the deadline answers a gRPC client with DEADLINE_EXCEEDED, as a 504 to anyone else")
    func status() {
        let problem = ExchangeStateMachine.Failure.callDeadlinePassed(Self.callLimit).problem(
            binding: nil, bodyStall: .seconds(60))
        #expect(problem.grpcStatus == 4)
        #expect(problem.status == .gatewayTimeout)
        #expect(problem.type == "urn:bearer-proxy:problem:deadline-exceeded")
    }
}
