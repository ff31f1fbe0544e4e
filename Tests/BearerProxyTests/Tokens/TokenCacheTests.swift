import Foundation
import Synchronization
import Testing

@testable import BearerProxy

/// A flow that counts its token requests and answers when the test says so.
final class CountingFlow: SignInFlow {
    let name = "counting"
    let requests = Atomic<Int>(0)
    let lifetime: TimeInterval
    let now: @Sendable () -> Date
    private let gate: AsyncStream<Void>
    private let release: AsyncStream<Void>.Continuation
    let failure: TokenError?

    init(lifetime: TimeInterval = 3600, failure: TokenError? = nil, now: @escaping @Sendable () -> Date) {
        self.lifetime = lifetime
        self.failure = failure
        self.now = now
        (gate, release) = AsyncStream.makeStream()
    }

    /// Lets the pending token request finish.
    func open() { release.yield() }

    func acquireToken(for scopes: ScopeSet) async throws(TokenError) -> AccessToken {
        let count = requests.add(1, ordering: .relaxed).newValue
        var iterator = gate.makeAsyncIterator()
        _ = await iterator.next()
        if let failure { throw failure }
        let issued = now()
        return AccessToken(
            value: "token-\(count)", scopes: scopes, expiresOn: issued.addingTimeInterval(lifetime), issuedAt: issued)
    }
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0.addTimeInterval(seconds) } }
}

@Suite("Token cache: one request per scope set, five-minute margin")
struct TokenCacheTests {
    let scopes = ScopeSet(["api://a/Read"])

    @Test("1,000 concurrent callers on a cold cache cause exactly one token request")
    func singleFlight() async throws {
        let clock = TestClock()
        let flow = CountingFlow(now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let scopes = self.scopes
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 {
                group.addTask { try await cache.accessToken(for: scopes).value }
            }
            // Wait until the leader has asked, then let it answer.
            while flow.requests.load(ordering: .relaxed) == 0 { await Task.yield() }
            flow.open()
            var values: Set<String> = []
            for try await value in group { values.insert(value) }
            #expect(values == ["token-1"])
        }
        #expect(flow.requests.load(ordering: .relaxed) == 1)
    }

    @Test("different scope sets get different tokens")
    func perScopeSet() async throws {
        let clock = TestClock()
        let flow = CountingFlow(now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        flow.open()
        let first = try await cache.accessToken(for: scopes)
        let second = try await cache.accessToken(for: ScopeSet(["api://b/Read"]))
        #expect(first.value != second.value)
        #expect(first.scopes != second.scopes)
        #expect(cache.cachedToken(for: scopes)?.value == first.value)
    }

    @Test("a token with less than five minutes left is not used")
    func fiveMinuteMargin() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 600, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        _ = try await cache.accessToken(for: scopes)
        clock.advance(299)
        #expect(cache.cachedToken(for: scopes) != nil)
        clock.advance(2)
        #expect(cache.cachedToken(for: scopes) == nil)
        flow.open()
        #expect(try await cache.accessToken(for: scopes).value == "token-2")
    }

    @Test("a failure reaches every waiter and nothing is cached")
    func failureIsShared() async throws {
        let clock = TestClock()
        let flow = CountingFlow(failure: .signInRequired(reason: "not signed in"), now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let scopes = self.scopes
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await cache.accessToken(for: scopes)
                        return false
                    } catch {
                        return error as? TokenError == .signInRequired(reason: "not signed in")
                    }
                }
            }
            while flow.requests.load(ordering: .relaxed) == 0 { await Task.yield() }
            flow.open()
            var count = 0
            for await failed in group where failed { count += 1 }
            return count
        }
        #expect(failures == 10)
        #expect(flow.requests.load(ordering: .relaxed) == 1)
        #expect(cache.cachedToken(for: scopes) == nil)
    }

    @Test("a token's description never shows its value")
    func redacted() {
        let token = AccessToken(
            value: "secret-value", scopes: scopes, expiresOn: Date(timeIntervalSince1970: 10),
            issuedAt: Date(timeIntervalSince1970: 0))
        #expect(!"\(token)".contains("secret-value"))
        #expect(!String(reflecting: token).contains("secret-value"))
        #expect("\(token)".contains("<redacted>"))
    }
}
