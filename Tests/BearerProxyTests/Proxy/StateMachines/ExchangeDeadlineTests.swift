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

/// The exchange's time limits and the WebSocket handshake, as transitions.
@Suite("Exchange state machine: time limits and WebSocket, pure")
struct ExchangeDeadlineTests {
    @Test("the token wait ends at the route's limit")
    func tokenWait() throws {
        var script = ExchangeScript()
        _ = script.proxied(needsToken: true)
        _ = script.end()
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.routeLimit)
        script.advance(ExchangeScript.routeLimit - .seconds(1))
        #expect(script.timer() == .none)
        script.advance(.seconds(1))
        #expect(
            script.timer()
                == .answer(
                    .failure(.tokenWaitTimedOut), keepAlive: true, closeUpstream: false, then: .finished(close: false)))
    }

    @Test("the response head is due a route's limit after the request went up in full, 1xx or not")
    func responseHead() throws {
        var script = ExchangeScript(.init(method: .PUT, expectsContinue: true))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        // While the upload streams there is no response deadline, only the body's.
        #expect(script.machine.nextDeadline == ExchangeScript.start + ExchangeScript.bodyStall)
        _ = script.head(.continue)
        script.advance(.seconds(5))
        _ = script.end()
        let due = script.now + ExchangeScript.routeLimit
        #expect(script.machine.nextDeadline == due)
        script.advance(ExchangeScript.routeLimit)
        #expect(
            script.timer()
                == .answer(
                    .failure(.responseHeadTimedOut), keepAlive: true, closeUpstream: true, then: .finished(close: false)
                ))
    }

    @Test("a stalled body: 408 when the proxy was reading; nobody's stall while reads wait for a connection")
    func bodyStall() throws {
        var script = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        script.advance(ExchangeScript.bodyStall)
        #expect(script.timer(readsWithheld: true) == .none)  // no connection yet: reads wait for it
        #expect(script.machine.nextDeadline == script.now + ExchangeScript.bodyStall)
        _ = script.connected(ticket)
        script.advance(.seconds(10))
        _ = script.body("x")  // progress moves the deadline
        #expect(script.machine.nextDeadline == script.now + ExchangeScript.bodyStall)
        script.advance(ExchangeScript.bodyStall)
        #expect(script.timer() == Self.stalled)
    }

    @Test("an upstream that takes none of the body for the body-stall limit: 504, both connections closed")
    func upstreamStoppedReading() throws {
        var script = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        _ = script.body("x")
        script.advance(ExchangeScript.bodyStall - .seconds(1))
        #expect(script.timer(readsWithheld: true) == .none)  // not yet due
        script.advance(.seconds(1))
        #expect(
            script.timer(readsWithheld: true)
                == .answer(
                    .failure(.upstreamStoppedReading), keepAlive: false, closeUpstream: true,
                    then: .finished(close: true)))
        #expect(script.machine.persistence == .close)
    }

    @Test("a client waiting for 100 Continue is not stalling; after the upstream's 100 the body-stall limit applies")
    func waitingForContinue() throws {
        var script = ExchangeScript(.init(method: .POST, expectsContinue: true))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        _ = script.head(.continue)
        script.advance(ExchangeScript.bodyStall)
        #expect(script.timer() == Self.stalled)
    }

    @Test("the wait for 100 Continue is bounded: at the body-stall limit the proxy sends 100, then the limit applies")
    func continueWaitIsBounded() throws {
        var script = ExchangeScript(.init(method: .POST, expectsContinue: true))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.connected(ticket)
        script.advance(ExchangeScript.bodyStall)
        #expect(script.timer() == .sendContinue)
        #expect(script.machine.nextDeadline == script.now + ExchangeScript.bodyStall)
        script.advance(ExchangeScript.bodyStall)
        #expect(script.timer() == Self.stalled)
    }

    @Test("nothing is due once the request has ended and the head has come")
    func nothingDue() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        _ = script.head(.ok)
        #expect(script.machine.nextDeadline == nil)
        script.advance(.hours(1))
        #expect(script.timer() == .none)
    }

    @Test("a request that cannot be read is answered as if it had ended, and the connection closes after")
    func readFailed() throws {
        var script = ExchangeScript(.init(method: .POST))
        _ = script.proxied(needsToken: true)
        #expect(
            script.machine.readFailed(.headersTooLarge)
                == .answer(
                    .problem(.headersTooLarge), keepAlive: false, closeUpstream: false, then: .finished(close: true)))
        #expect(script.machine.persistence == .close)
    }

    /// A stalled body while the request streams up: answered (the upstream connection closed), then the client's.
    static let stalled = ExchangeStateMachine.Action.answer(
        .failure(.bodyStalled), keepAlive: false, closeUpstream: true, then: .finished(close: true))

    @Test("a WebSocket handshake: reads are held until the tunnel, a 101 after the request's end switches")
    func webSocket() throws {
        var script = ExchangeScript(.init(method: .GET, upgrade: .webSocket))
        #expect(script.machine.persistence == .close)
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        #expect(!script.machine.wantsRead(upstreamWritable: true))
        _ = script.connected(ticket)
        #expect(!script.machine.wantsRead(upstreamWritable: true))
        #expect(script.head(.switchingProtocols) == .switchProtocols(ExchangeScript.responseHead(.switchingProtocols)))
        #expect(script.stateName == "tunnelling")
        #expect(!script.machine.wantsRead(upstreamWritable: true))
        #expect(script.machine.clientClosed() == .abandon(closeUpstream: false, responseEnded: true))
    }

    @Test("a refused handshake passes through with its status, and the connection closes after it")
    func refusedHandshake() throws {
        var script = ExchangeScript(.init(method: .GET, upgrade: .webSocket))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.forbidden) == script.forwarded(keepAlive: false))
        #expect(script.responseEnd() == ExchangeScript.finish(.park, then: .finished(close: true)))
    }

    @Test(
        "a 101 to anything but a WebSocket handshake is a protocol violation",
        arguments: [
            WebSocketUpgrade.Requested.none, .other,
        ])
    func unexpectedSwitch(_ upgrade: WebSocketUpgrade.Requested) throws {
        var script = ExchangeScript(.init(method: .GET, upgrade: upgrade))
        #expect(upgrade == .none ? script.machine.persistence == .keepAlive : script.machine.persistence == .close)
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(
            script.head(.switchingProtocols)
                == .answer(
                    .failure(.unexpectedSwitch), keepAlive: upgrade == .none, closeUpstream: true,
                    then: .finished(close: upgrade != .none)))
    }

    @Test("backpressure: while the upload streams, reads follow the upstream's writability; after it, always")
    func reading() throws {
        var script = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        #expect(!script.machine.wantsRead(upstreamWritable: true))  // no connection yet
        _ = script.connected(ticket)
        #expect(script.machine.wantsRead(upstreamWritable: true))
        #expect(!script.machine.wantsRead(upstreamWritable: false))
        _ = script.end()
        #expect(script.machine.wantsRead(upstreamWritable: false))
    }
}
