import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// The data plane sends a token it read from the cache again without asking the cache (`TokenCache.ReusableToken`,
/// kept per event loop) only while the cache would answer the same: every change that decides a token's use —
/// a new token, an invalidation, a drop, a sign-in or sign-out, another process's write, a refresh — ends the reuse
/// at once, and so does either clock reaching the token's margin. A reuse that outlived any of these would send a
/// token its owner has signed out of, or one an upstream refused.
@Suite("Tokens: a token reused without the cache's lock is the one the cache would give")
struct ReusableTokenTests {
    let scopes = ScopeSet(["api://a/Read"])

    /// A cache with one token for `scopes`, its clocks, and the token read for reuse.
    private func cacheWithToken(lifetime: TimeInterval = 3600) async throws -> (
        cache: TokenCache, flow: CountingFlow, wall: TestClock, monotonic: TestClock, reusable: TokenCache.ReusableToken
    ) {
        let wall = TestClock()
        let monotonic = TestClock()
        let flow = CountingFlow(lifetime: lifetime, gated: false, now: { wall.now })
        let cache = TokenCache(
            flow: flow, now: { wall.now }, uptime: { .seconds(monotonic.now.timeIntervalSince1970) })
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        let read = cache.cachedToken(forReuse: scopes)
        let reusable = try #require(read.reusable)
        #expect(read.token?.value == reusable.token.value)
        #expect(cache.isStillReusable(reusable))
        return (cache, flow, wall, monotonic, reusable)
    }

    @Test("while nothing changes and both clocks are inside the margin it is reused; at the margin it is not")
    func clocks() async throws {
        let (cache, _, wall, monotonic, reusable) = try await cacheWithToken()
        // 3600 s tokens keep a 300 s margin: reusable for 3299 s by either clock, not at 3300.
        wall.advance(3299)
        monotonic.advance(3299)
        #expect(cache.isStillReusable(reusable))
        wall.advance(1)
        #expect(!cache.isStillReusable(reusable), "the wall clock reached the margin")
        wall.advance(-3600)
        #expect(cache.isStillReusable(reusable))
        monotonic.advance(1)
        #expect(!cache.isStillReusable(reusable), "the monotonic clock reached the margin, the wall clock stepped back")
        monotonic.advance(1)
        #expect(cache.cachedToken(for: scopes) == nil, "and a second on, the cache agrees: not sendable")
    }

    @Test("an upstream's refusal (invalidate) ends the reuse")
    func invalidated() async throws {
        let (cache, _, _, _, reusable) = try await cacheWithToken()
        cache.invalidate(scopes, rejected: reusable.token.value)
        #expect(!cache.isStillReusable(reusable))
        #expect(cache.cachedToken(for: scopes) == nil)
    }

    @Test("a step-up's drop ends the reuse")
    func dropped() async throws {
        let (cache, _, _, _, reusable) = try await cacheWithToken()
        cache.drop(scopes, token: reusable.token.value, wanting: ["api://a/Write"])
        #expect(!cache.isStillReusable(reusable))
    }

    @Test(
        "a sign-in, a sign-out or another process's write ends the reuse, even when it brings the same token back",
        arguments: [
            TokenReplacement.signedIn, .signedOut, .changedElsewhere(sameCredential: true),
            .changedElsewhere(sameCredential: false),
        ])
    func replaced(reason: TokenReplacement) async throws {
        let (cache, _, _, _, reusable) = try await cacheWithToken()
        let kept = reason == .signedOut ? [] : [reusable.token]
        cache.replaceTokens(with: kept, because: reason)
        #expect(!cache.isStillReusable(reusable))
        let again = cache.cachedToken(forReuse: scopes)
        #expect(again.token?.value == kept.first?.value)
        if let fresh = again.reusable { #expect(cache.isStillReusable(fresh)) }
    }

    @Test("a new token for the scope set (a refresh) ends the old one's reuse")
    func refreshed() async throws {
        let (cache, flow, wall, monotonic, reusable) = try await cacheWithToken()
        // Past its refresh time (the half-life), inside its margin: the refresh stores token-2.
        wall.advance(1801)
        monotonic.advance(1801)
        #expect(cache.isStillReusable(reusable))
        #expect(await cache.refreshDueTokens() == 1)
        #expect(flow.requests.load(ordering: .relaxed) == 2)
        #expect(!cache.isStillReusable(reusable))
        #expect(cache.cachedToken(forReuse: scopes).reusable?.token.value == "token-2")
    }

    @Test("a token inside its margin is sent in its first seconds (the 10 s rule) but never offered for reuse")
    func insideTheMargin() async throws {
        // A 4 s token: its margin (1 s) is inside what the 10 s rule lets it be sent for.
        let (cache, _, wall, monotonic, _) = try await cacheWithToken(lifetime: 4)
        wall.advance(3.5)
        monotonic.advance(3.5)
        let read = cache.cachedToken(forReuse: scopes)
        #expect(read.token != nil, "sendable: obtained under 10 s ago")
        #expect(read.reusable == nil, "but only by the rule the reuse does not follow")
    }
}
