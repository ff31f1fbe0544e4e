import Foundation
import Synchronization
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

/// A flow that counts its token requests and answers when the test says so (or at once, when not gated), with
/// scripted failures.
final class CountingFlow: SignInFlow {
    let name = "counting"
    let requests = Atomic<Int>(0)
    let lifetime: TimeInterval
    let refreshIn: TimeInterval?
    let now: @Sendable () -> Date
    private let gated: Bool
    private let gate: AsyncStream<Void>
    private let release: AsyncStream<Void>.Continuation
    private let failures = Mutex<[TokenError]>([])
    private let fixedFailure: TokenError?
    private let seenClaims = Mutex<[String?]>([])
    /// What the provider "grants" beyond the request (for subset reuse).
    let extraGranted: [String]

    init(
        lifetime: TimeInterval = 3600, refreshIn: TimeInterval? = nil, failure: TokenError? = nil, gated: Bool = true,
        extraGranted: [String] = [], now: @escaping @Sendable () -> Date
    ) {
        self.lifetime = lifetime
        self.refreshIn = refreshIn
        self.fixedFailure = failure
        self.gated = gated
        self.extraGranted = extraGranted
        self.now = now
        (gate, release) = AsyncStream.makeStream()
    }

    /// Lets the pending token request finish.
    func open() { release.yield() }

    /// The next requests fail with these, in order.
    func fail(next errors: TokenError...) { failures.withLock { $0 += errors } }

    var claimsSeen: [String?] { seenClaims.withLock { $0 } }

    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let count = requests.add(1, ordering: .relaxed).newValue
        seenClaims.withLock { $0.append(request.claims) }
        if gated {
            let gate = self.gate
            do {
                try await withTimeout(waitingFor: "the test to let the token request finish") {
                    var iterator = gate.makeAsyncIterator()
                    _ = await iterator.next()
                }
            } catch {
                throw .providerUnavailable(reason: "the test never opened the gate", retryAfterSeconds: 0)
            }
        }
        if let fixedFailure { throw fixedFailure }
        if let scripted = failures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw scripted }
        let issued = now()
        return AccessToken(
            value: "token-\(count)", scopes: request.scopes, grantedScopes: request.scopes.scopes + extraGranted,
            expiresOn: issued.addingTimeInterval(lifetime), refreshOn: refreshIn.map { issued.addingTimeInterval($0) },
            issuedAt: issued)
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
        let values = try await withTimeout(waitingFor: "1,000 concurrent callers to get a token") {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1000 {
                    group.addTask { try await cache.accessTokenWithinLimit(for: scopes).value }
                }
                // Wait until the leader has asked, then let it answer.
                try await waitUntil("the first token request") { flow.requests.load(ordering: .relaxed) > 0 }
                flow.open()
                var values: Set<String> = []
                for try await value in group { values.insert(value) }
                return values
            }
        }
        #expect(values == ["token-1"])
        #expect(flow.requests.load(ordering: .relaxed) == 1)
    }

    @Test("different scope sets get different tokens")
    func perScopeSet() async throws {
        let clock = TestClock()
        let flow = CountingFlow(now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        flow.open()
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        let second = try await cache.accessTokenWithinLimit(for: ScopeSet(["api://b/Read"]))
        #expect(first.value != second.value)
        #expect(first.scopes != second.scopes)
        #expect(cache.cachedToken(for: scopes)?.value == first.value)
    }

    @Test("a token with less than five minutes left is not used")
    func fiveMinuteMargin() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 3600, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        clock.advance(3299)
        #expect(cache.cachedToken(for: scopes) != nil)
        clock.advance(2)
        #expect(cache.cachedToken(for: scopes) == nil)
        flow.open()
        #expect(try await cache.accessTokenWithinLimit(for: scopes).value == "token-2")
    }

    @Test(
        "a short-lived token's margin is a quarter of its lifetime: Keycloak's 300 s tokens serve 225 s (#22 item 6)",
        arguments: [(300.0, 225.0), (600.0, 450.0), (1200.0, 900.0), (3600.0, 3300.0)])
    func shortLivedMargin(lifetime: TimeInterval, usableFor: TimeInterval) async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: lifetime, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        clock.advance(usableFor - 1)
        #expect(cache.cachedToken(for: scopes) != nil, "\(lifetime)")
        clock.advance(2)
        #expect(cache.cachedToken(for: scopes) == nil, "\(lifetime)")
        #expect(flow.requests.load(ordering: .relaxed) == 1)
    }

    @Test("a back-off runs on the monotonic clock: a wall clock stepped an hour does not stretch it (#22 item 1)")
    func backoffSurvivesClockSteps() async throws {
        let wall = TestClock()
        let monotonic = TestClock()
        let flow = CountingFlow(gated: false, now: { wall.now })
        let cache = TokenCache(
            flow: flow, now: { wall.now }, uptime: { .seconds(monotonic.now.timeIntervalSince1970) })
        flow.fail(next: .providerUnavailable(reason: "down", retryAfterSeconds: 3))
        await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        for step in [-3600.0, 7200, -86_400] {
            wall.advance(step)
            do {
                _ = try await cache.accessTokenWithinLimit(for: scopes)
                Issue.record("the back-off ended early")
            } catch let error as TokenError {
                guard case .providerUnavailable(_, let retryAfter) = error else { throw error }
                #expect(retryAfter == 3, "after a wall-clock step of \(step) s")
            }
        }
        #expect(flow.requests.load(ordering: .relaxed) == 1)
        // Three seconds of real time later the provider (recovered) is asked again.
        monotonic.advance(3)
        let token = try await cache.accessTokenWithinLimit(for: scopes)
        #expect(token.isUsable(at: wall.now))
        #expect(flow.requests.load(ordering: .relaxed) == 2)
        // A token obtained now survives steps of the wall clock either way without a request storm: forward past
        // its expiry it is fetched once; back, it is still the same token.
        wall.advance(-3600)
        #expect(cache.cachedToken(for: scopes)?.value == token.value)
        wall.advance(3600 + 7200)
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        #expect(flow.requests.load(ordering: .relaxed) == 3)
    }

    @Test("a wall clock stepped back does not keep an expired token in use or skip its refresh (#22 item 1)")
    func tokenLifeRunsOnBothClocks() async throws {
        let wall = TestClock()
        let monotonic = TestClock()
        let flow = CountingFlow(gated: false, now: { wall.now })
        let cache = TokenCache(
            flow: flow, now: { wall.now }, uptime: { .seconds(monotonic.now.timeIntervalSince1970) })
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        // 50 min pass while the wall clock is stepped back an hour: by the wall clock the token has 70 min left, in
        // truth 10 — past its refresh time (the half-life, 30 min).
        monotonic.advance(3000)
        wall.advance(3000 - 3600)
        #expect(await cache.refreshDueTokens() == 1, "the refresh was skipped")
        #expect(cache.cachedToken(for: scopes)?.value != first.value)
        // 58 more minutes, nobody refreshing: 2 min of true life left is inside the margin (5 min): not sent.
        let second = try #require(cache.cachedToken(for: scopes))
        monotonic.advance(3480)
        wall.advance(3480 - 3600)
        #expect(cache.cachedToken(for: scopes) == nil, "a token with 2 min of true life left was sent")
        let third = try await cache.accessTokenWithinLimit(for: scopes)
        #expect(third.value != second.value)
        #expect(flow.requests.load(ordering: .relaxed) == 3)
        // And forward: a wall clock an hour ahead costs one token request, not one per request.
        wall.advance(3600)
        for _ in 0..<5 { _ = try await cache.accessTokenWithinLimit(for: scopes) }
        #expect(await cache.refreshDueTokens() == 0)
        #expect(flow.requests.load(ordering: .relaxed) == 4)
    }

    @Test("a token that arrives expired is never handed out; the back-off paces the next request (#22 item 6)")
    func expiredOnArrival() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 0, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        flow.open()
        await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        for _ in 0..<20 {
            await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        }
        #expect(flow.requests.load(ordering: .relaxed) == 1, "a storm of token requests")
        #expect(cache.cachedToken(for: scopes) == nil)
    }

    @Test("tokens that live seconds cost at most one token request per 10 s, and are used while valid (#22 item 6)")
    func tinyLifetimes() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 2, gated: false, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        clock.advance(1)
        // Inside its margin but still valid, and obtained a second ago: used.
        #expect(cache.cachedToken(for: scopes)?.value == first.value)
        #expect(try await cache.accessTokenWithinLimit(for: scopes).value == first.value)
        clock.advance(2)
        // Expired 3 s after it was obtained: no new request before 10 s, a 503 with the wait instead.
        do {
            _ = try await cache.accessTokenWithinLimit(for: scopes)
            Issue.record("a token request 3 s after the last one")
        } catch let error as TokenError {
            guard case .providerUnavailable(_, let retryAfter) = error else { throw error }
            #expect(retryAfter == 7)
        }
        #expect(flow.requests.load(ordering: .relaxed) == 1)
        clock.advance(7)
        #expect(try await cache.accessTokenWithinLimit(for: scopes).value != first.value)
        #expect(flow.requests.load(ordering: .relaxed) == 2)
    }

    @Test("a failure reaches every waiter and nothing is cached")
    func failureIsShared() async throws {
        let clock = TestClock()
        let flow = CountingFlow(failure: .signInRequired(reason: "not signed in"), now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let scopes = self.scopes
        let failures = try await withTimeout(waitingFor: "10 concurrent callers to get the failure") {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        do {
                            _ = try await cache.accessTokenWithinLimit(for: scopes)
                            return false
                        } catch {
                            return error as? TokenError == .signInRequired(reason: "not signed in")
                        }
                    }
                }
                try await waitUntil("the first token request") { flow.requests.load(ordering: .relaxed) > 0 }
                flow.open()
                var count = 0
                for try await failed in group where failed { count += 1 }
                return count
            }
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

    @Test("a token granted for more scopes serves a request for a subset of them")
    func subsetReuse() async throws {
        let clock = TestClock()
        let flow = CountingFlow(gated: false, extraGranted: ["api://a/Write"], now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let wide = try await cache.accessTokenWithinLimit(for: ScopeSet(["api://a/Read", "api://a/Write"]))
        #expect(cache.cachedToken(for: ScopeSet(["api://a/Write"]))?.value == wide.value)
        #expect(try await cache.accessTokenWithinLimit(for: ScopeSet(["api://a/Read"])).value == wide.value)
        #expect(cache.cachedToken(for: ScopeSet(["api://b/Read"])) == nil)
        #expect(flow.requests.load(ordering: .relaxed) == 1)
    }

    @Test("429 with Retry-After: no new request before it has passed, then one")
    func retryAfterRespected() async throws {
        let clock = TestClock()
        let flow = CountingFlow(gated: false, now: { clock.now })
        flow.fail(next: .providerUnavailable(reason: "throttled", retryAfterSeconds: 30))
        let cache = TokenCache(flow: flow, now: { clock.now })
        await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        for _ in 0..<5 {
            clock.advance(5)
            await #expect {
                _ = try await cache.accessTokenWithinLimit(for: scopes)
            } throws: { error in
                // The same failure, with Retry-After counting down.
                guard case TokenError.providerUnavailable(_, let retryAfter) = error else { return false }
                return retryAfter <= 25 && retryAfter >= 1
            }
        }
        #expect(flow.requests.load(ordering: .relaxed) == 1)
        clock.advance(6)
        #expect(try await cache.accessTokenWithinLimit(for: scopes).value == "token-2")
        #expect(flow.requests.load(ordering: .relaxed) == 2)
    }

    @Test("a new account (a sign-in here or in another process) ends the old account's back-off at once")
    func accountChangeEndsBackoff() async throws {
        let changes: [TokenReplacement] = [.changedElsewhere(sameCredential: false), .signedIn, .signedOut]
        for change in changes {
            let clock = TestClock()
            let flow = CountingFlow(gated: false, now: { clock.now })
            flow.fail(next: .signInRequired(reason: "Not signed in."))
            let cache = TokenCache(flow: flow, now: { clock.now })
            await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
            // Backing off: the same failure without asking the flow.
            await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
            #expect(flow.requests.load(ordering: .relaxed) == 1)
            cache.replaceTokens(with: [], because: change)
            #expect(try await cache.accessTokenWithinLimit(for: scopes).value == "token-2", "\(change)")
        }
    }

    @Test("replacing every token reports why, so only this process's own replacements are written to the file")
    func replacementsAreTagged() {
        let clock = TestClock()
        let changes = Mutex<[TokenCacheChange]>([])
        let cache = TokenCache(
            flow: CountingFlow(gated: false, now: { clock.now }), now: { clock.now },
            onChange: { change in changes.withLock { $0.append(change) } })
        let token = AccessToken(
            value: "t", scopes: scopes, expiresOn: clock.now.addingTimeInterval(3600), issuedAt: clock.now)
        let reasons: [TokenReplacement] = [
            .signedIn, .signedOut, .restored, .changedElsewhere(sameCredential: true),
            .changedElsewhere(sameCredential: false),
        ]
        for reason in reasons { cache.replaceTokens(with: [token], because: reason) }
        let reported = changes.withLock { $0 }
        #expect(reported.map(\.isLocal) == [true, true, false, false, false])
        // Whatever the reason, the usable tokens given are the ones cached afterwards.
        #expect(cache.allTokens.map(\.value) == ["t"])
    }

    @Test("another process's tokens for the same account keep this process's back-off, except where they bring a token")
    func takeOverKeepsBackoff() async throws {
        let clock = TestClock()
        let flow = CountingFlow(gated: false, now: { clock.now })
        flow.fail(next: .providerUnavailable(reason: "throttled", retryAfterSeconds: 30))
        let cache = TokenCache(flow: flow, now: { clock.now })
        await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        let other = ScopeSet(["api://other/Read"])
        let elsewhere = AccessToken(
            value: "from-another-process", scopes: other, expiresOn: clock.now.addingTimeInterval(3600),
            issuedAt: clock.now)
        cache.replaceTokens(with: [elsewhere], because: .changedElsewhere(sameCredential: true))
        // Still backing off for `scopes` (no new request), while the other scope set's token is served.
        await #expect(throws: TokenError.self) { try await cache.accessTokenWithinLimit(for: scopes) }
        #expect(flow.requests.load(ordering: .relaxed) == 1)
        #expect(cache.cachedToken(for: other)?.value == "from-another-process")
        // A token for the throttled scope set ends its back-off: it is used at once.
        let mine = AccessToken(
            value: "stored-elsewhere", scopes: scopes, expiresOn: clock.now.addingTimeInterval(3600),
            issuedAt: clock.now)
        cache.replaceTokens(with: [elsewhere, mine], because: .changedElsewhere(sameCredential: true))
        #expect(try await cache.accessTokenWithinLimit(for: scopes).value == "stored-elsewhere")
        #expect(flow.requests.load(ordering: .relaxed) == 1)
    }

    @Test("failures without Retry-After back off 2 s, 4 s, 8 s …, at most 60 s")
    func backoff() {
        let error = TokenError.signInRequired(reason: "x")
        #expect(TokenCache.backoff(for: error, failures: 1) == 2)
        #expect(TokenCache.backoff(for: error, failures: 2) == 4)
        #expect(TokenCache.backoff(for: error, failures: 3) == 8)
        #expect(TokenCache.backoff(for: error, failures: 10) == 60)
        #expect(TokenCache.backoff(for: .providerUnavailable(reason: "", retryAfterSeconds: 120), failures: 1) == 120)
    }

    @Test("proactive refresh replaces a token past refresh_in; the old one is served meanwhile")
    func proactiveRefresh() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 3600, refreshIn: 600, gated: false, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        #expect(await cache.refreshDueTokens() == 0)
        clock.advance(601)
        #expect(cache.cachedToken(for: scopes)?.value == first.value)  // still served until replaced
        #expect(await cache.refreshDueTokens() == 1)
        #expect(cache.cachedToken(for: scopes)?.value == "token-2")
    }

    @Test("a failed refresh keeps serving the still-valid token and retries after a backoff")
    func refreshFailureKeepsToken() async throws {
        let clock = TestClock()
        let flow = CountingFlow(lifetime: 3600, refreshIn: 600, gated: false, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        clock.advance(601)
        flow.fail(next: .providerUnavailable(reason: "down", retryAfterSeconds: 10))
        #expect(await cache.refreshDueTokens() == 0)
        #expect(cache.cachedToken(for: scopes)?.value == first.value)
        #expect(cache.status(for: scopes).lastError?.contains("down") == true)
        #expect(await cache.refreshDueTokens() == 0)  // backing off: no request
        #expect(flow.requests.load(ordering: .relaxed) == 2)
        clock.advance(11)
        #expect(await cache.refreshDueTokens() == 1)
        #expect(cache.cachedToken(for: scopes)?.value == "token-3")
        #expect(cache.status(for: scopes).lastError == nil)
    }

    @Test("a claims challenge bypasses the cached token and reaches the flow")
    func claimsBypassCache() async throws {
        let clock = TestClock()
        let flow = CountingFlow(gated: false, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        _ = try await cache.accessTokenWithinLimit(for: scopes)
        let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        let fresh = try await cache.accessTokenWithinLimit(for: scopes, claims: claims)
        #expect(fresh.value == "token-2")
        #expect(flow.claimsSeen == [nil, claims])
        #expect(cache.cachedToken(for: scopes)?.value == "token-2")
    }

    @Test("invalidate drops only the token that was rejected")
    func targetedInvalidation() async throws {
        let clock = TestClock()
        let flow = CountingFlow(gated: false, now: { clock.now })
        let cache = TokenCache(flow: flow, now: { clock.now })
        let first = try await cache.accessTokenWithinLimit(for: scopes)
        cache.invalidate(scopes, rejected: "some-older-token")
        #expect(cache.cachedToken(for: scopes)?.value == first.value)
        cache.invalidate(scopes, rejected: first.value)
        #expect(cache.cachedToken(for: scopes) == nil)
    }
}
