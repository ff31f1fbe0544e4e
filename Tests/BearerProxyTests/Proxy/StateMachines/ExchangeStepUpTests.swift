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

/// `"stepUp": "auto"` in the exchange (#25 item 5): a `403` `insufficient_scope` is replayed once with the token of
/// a new sign-in, like a `401` `invalid_token` with a refreshed one; whatever stops that replay answers the step-up
/// problem it would have answered without the opt-in, saying why.
@Suite("The exchange's step-up replay")
struct ExchangeStepUpTests {
    static let scopes = ["a", "b"]

    /// A GET whose upstream answered `403` asking for ``scopes``, with the opt-in: returns the replay's ticket.
    static func steppingUp(_ script: inout ExchangeScript) throws -> ExchangeStateMachine.Ticket {
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.forbidden, retry: .stepUp(scopes), stepUp: scopes) == .none)
        #expect(script.machine.awaitsStepUp)
        let replay = script.responseEnd()
        let second = try #require(ExchangeScript.ticket(of: replay))
        #expect(replay == .replayWithNewToken(release: .park, retry: .stepUp(scopes), ticket: second))
        #expect(script.stateName == "awaitingToken")
        return second
    }

    static func problem(_ note: String?) -> ExchangeStateMachine.Action {
        .answer(
            .failure(.insufficientScope(scopes: scopes, note: note)), keepAlive: true, closeUpstream: false,
            then: .finished(close: false))
    }

    @Test("the 403 is dropped, the request goes again once with the new token; a second 403 is answered")
    func replayedOnce() throws {
        var script = ExchangeScript()
        let second = try Self.steppingUp(&script)
        #expect(script.machine.tokenArrived(second) == .connect(second))
        #expect(script.connected(second) == .sendRequest(body: [], end: true))
        #expect(
            script.head(.forbidden, retry: .stepUp(Self.scopes), stepUp: Self.scopes)
                == .answer(
                    .failure(
                        .insufficientScope(
                            scopes: Self.scopes, note: "the upstream refused the token of its sign-in for them too")),
                    keepAlive: true, closeUpstream: true, then: .finished(close: false)))
    }

    @Test("the replay's 200 is forwarded")
    func replayAnswered() throws {
        var script = ExchangeScript()
        let second = try Self.steppingUp(&script)
        _ = script.machine.tokenArrived(second)
        _ = script.connected(second)
        #expect(script.head(.ok) == script.forwarded(keepAlive: true))
    }

    @Test("no token from the sign-in: the step-up problem, with the reason")
    func declined() throws {
        var script = ExchangeScript()
        let second = try Self.steppingUp(&script)
        #expect(
            script.machine.tokenFailed(second, .signInRequired(reason: "declined"))
                == Self.problem("declined"))
    }

    @Test("no token within the route's limit: the step-up problem, not the token wait's 503")
    func timedOut() throws {
        var script = ExchangeScript()
        _ = try Self.steppingUp(&script)
        script.advance(ExchangeScript.routeLimit + .seconds(1))
        #expect(script.timer() == Self.problem("its sign-in was not finished within the route's limit"))
    }

    @Test("a body past the kept copy, or a request replayed already: the problem at once, saying why")
    func notReplayable() throws {
        var large = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: large.proxied()))
        _ = large.connected(ticket)
        _ = large.body(String(repeating: "x", count: ExchangeStateMachine.replayLimit + 1))
        _ = large.end()
        let answer = large.head(.forbidden, retry: .stepUp(Self.scopes), stepUp: Self.scopes)
        guard case .answer(.failure(.insufficientScope(_, let note?)), _, _, _) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(note.contains("cannot be sent again"))

        var refreshed = ExchangeScript()
        let first = try #require(ExchangeScript.ticket(of: refreshed.proxied()))
        _ = refreshed.end()
        _ = refreshed.connected(first)
        _ = refreshed.head(.unauthorized, retry: .refresh)
        let second = try #require(ExchangeScript.ticket(of: refreshed.responseEnd()))
        _ = refreshed.machine.tokenArrived(second)
        _ = refreshed.connected(second)
        let again = refreshed.head(.forbidden, retry: .stepUp(Self.scopes), stepUp: Self.scopes)
        guard case .answer(.failure(.insufficientScope(_, let twice?)), _, _, _) = again else {
            Issue.record("\(again)")
            return
        }
        #expect(twice.contains("sent again once already"))
    }

    @Test("without the opt-in the 403 is answered at once, with no note")
    func optedOut() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        guard case .answer(.failure(.insufficientScope(_, nil)), _, _, _) = script.head(.forbidden, stepUp: Self.scopes)
        else {
            Issue.record("not answered")
            return
        }
    }
}
