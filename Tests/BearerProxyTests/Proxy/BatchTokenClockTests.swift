import Foundation
import NIOEmbedded
import Synchronization
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerTokens

/// The token an event loop reuses is checked against both clocks once a batch of events (``EventBatch``), not once a
/// request — and against the cache's changes on every request. Here the batch is an `EmbeddedEventLoop`'s, ended by
/// `run()`, and the clocks count their readings.
@Suite("Tokens: a loop reads the reused token's clocks once a batch of events, its cache's changes every request")
struct BatchTokenClockTests {
    let scopes = ScopeSet(["api://a/Read"])

    /// Clocks that count how often they are read.
    final class CountedClocks: Sendable {
        let wall = TestClock()
        let monotonic = TestClock()
        let readings = Atomic<Int>(0)

        var now: Date {
            readings.add(1, ordering: .relaxed)
            return wall.now
        }

        var uptime: Duration {
            readings.add(1, ordering: .relaxed)
            return .seconds(monotonic.now.timeIntervalSince1970)
        }
    }

    /// A loop, a route that sends a token for `scopes`, and its cache holding one (3600 s: a 300 s margin).
    private func setUp() async throws -> (EventLoopState, RouteBinding, TokenCache, CountedClocks, EmbeddedEventLoop) {
        let clocks = CountedClocks()
        let flow = CountingFlow(lifetime: 3600, gated: false, now: { clocks.wall.now })
        let cache = TokenCache(flow: flow, now: { clocks.now }, uptime: { clocks.uptime })
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        let route = try TestConfigurations.route(
            #"{ "prefix": "/api", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/Read"] }"#)
        let binding = try RouteBinding(route, timeouts: ProxyTimeouts()) { try UpstreamTLS(caFile: $0, version: $1) }
        let eventLoop = EmbeddedEventLoop()
        return (EventLoopState(eventLoop: eventLoop), binding, cache, clocks, eventLoop)
    }

    private func token(_ loop: EventLoopState, _ binding: RouteBinding, _ cache: TokenCache) -> AccessToken? {
        loop.cachedToken(for: binding, key: scopes, in: cache)
    }

    @Test("many requests in one batch read the clocks once; the next batch reads them again")
    func oncePerBatch() async throws {
        let (loop, binding, cache, clocks, eventLoop) = try await setUp()
        clocks.readings.store(0, ordering: .relaxed)
        let first = try #require(token(loop, binding, cache))
        let read = clocks.readings.load(ordering: .relaxed)
        #expect(read == 2, "the first request's lookup reads both clocks")
        for _ in 0..<100 { #expect(token(loop, binding, cache)?.value == first.value) }
        #expect(clocks.readings.load(ordering: .relaxed) == read, "the rest of the batch reads none")
        eventLoop.run()
        #expect(token(loop, binding, cache)?.value == first.value)
        #expect(clocks.readings.load(ordering: .relaxed) == read + 2, "the next batch's first request reads both")
        #expect(token(loop, binding, cache)?.value == first.value)
        #expect(clocks.readings.load(ordering: .relaxed) == read + 2)
    }

    @Test("a token past its margin by both clocks is sent for the rest of the batch that found it inside, not after")
    func marginSeenNextBatch() async throws {
        let (loop, binding, cache, clocks, eventLoop) = try await setUp()
        let first = try #require(token(loop, binding, cache))
        clocks.wall.advance(3301)
        clocks.monotonic.advance(3301)
        #expect(token(loop, binding, cache)?.value == first.value, "the batch that read the clocks is not over")
        eventLoop.run()
        #expect(token(loop, binding, cache) == nil, "the next batch reads them: past its margin, not sent")
    }

    @Test("a change to the cache ends the reuse within the batch that read the clocks")
    func changeSeenAtOnce() async throws {
        let (loop, binding, cache, _, _) = try await setUp()
        let first = try #require(token(loop, binding, cache))
        cache.invalidate(scopes, rejected: first.value)
        #expect(token(loop, binding, cache) == nil, "refused by its upstream: never sent again")
    }
}
