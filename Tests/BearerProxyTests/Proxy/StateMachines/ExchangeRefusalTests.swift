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

/// A discovered route's `401` in the exchange (#25 item 8): the proxy signs in for the route, so a refusal it does
/// not replay is answered with its own problem and the upstream's challenge never reaches the client, whose OAuth
/// it would otherwise start.
@Suite("The exchange's answer to a discovered route's refused token")
struct ExchangeRefusalTests {
    /// The note of the problem `action` answers with, if it answers the refused-token problem.
    static func refusal(_ action: ExchangeStateMachine.Action) -> String? {
        guard case .answer(.failure(.tokenRefused(let note)), _, closeUpstream: true, _) = action else { return nil }
        return note
    }

    @Test("the first 401 is replayed with a new token; the second is the proxy's problem, not the upstream's")
    func afterTheReplay() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(script.head(.unauthorized, retry: .refresh, signsInItself: true) == .none)
        let second = try #require(ExchangeScript.ticket(of: script.responseEnd()))
        _ = script.machine.tokenArrived(second)
        _ = script.connected(second)
        let answer = script.head(.unauthorized, retry: .refresh, signsInItself: true)
        #expect(Self.refusal(answer) == "refused the new token it was sent again with too")
        #expect(script.stateName == "finished")
    }

    @Test("a challenge no new token fixes is answered at once, without a replay")
    func nothingToFix() throws {
        var script = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
        _ = script.end()
        _ = script.connected(ticket)
        #expect(Self.refusal(script.head(.unauthorized, signsInItself: true)) == "said nothing a new token would fix")
    }

    @Test("a body over the kept copy, or one still arriving: answered, saying the request cannot go again")
    func cannotGoAgain() throws {
        let note = "this request cannot be sent again (only one whose whole body, at most 64 KiB, has arrived)"
        var large = ExchangeScript(.init(method: .POST))
        let ticket = try #require(ExchangeScript.ticket(of: large.proxied()))
        _ = large.connected(ticket)
        _ = large.body(String(repeating: "x", count: ExchangeStateMachine.replayLimit + 1))
        _ = large.end()
        #expect(Self.refusal(large.head(.unauthorized, retry: .refresh, signsInItself: true)) == note)

        var uploading = ExchangeScript(.init(method: .POST))
        let other = try #require(ExchangeScript.ticket(of: uploading.proxied()))
        _ = uploading.connected(other)
        #expect(Self.refusal(uploading.head(.unauthorized, retry: .refresh, signsInItself: true)) == note)
    }

    @Test("other statuses of a discovered route, and a bearer route's 401, are forwarded as they came")
    func othersForwarded() throws {
        for status in [HTTPResponseStatus.ok, .forbidden, .notFound] {
            var script = ExchangeScript()
            let ticket = try #require(ExchangeScript.ticket(of: script.proxied()))
            _ = script.end()
            _ = script.connected(ticket)
            #expect(script.head(status, signsInItself: true) == script.forwarded(keepAlive: true))
        }
        var bearer = ExchangeScript()
        let ticket = try #require(ExchangeScript.ticket(of: bearer.proxied()))
        _ = bearer.end()
        _ = bearer.connected(ticket)
        #expect(bearer.head(.unauthorized) == bearer.forwarded(keepAlive: true))
    }

    @Test("the problem is a 401 sign-in-required naming the command, with nothing of the upstream's challenge")
    func problem() throws {
        let failure = ExchangeStateMachine.Failure.tokenRefused(note: "said nothing a new token would fix")
        let problem = failure.problem(binding: nil, bodyStall: .seconds(60))
        #expect(problem.status == .unauthorized)
        #expect(problem.type == "urn:bearer-proxy:problem:sign-in-required")
        #expect(problem.detail.contains("said nothing a new token would fix"))
        #expect(problem.detail.hasSuffix("bearer-proxy login -"))
        #expect(problem.extraHeaders.isEmpty)
    }
}
