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

/// The two rules around one redemption that need no provider: the retry with a newer refresh token after
/// `invalid_grant`, and the bounded wait for the redemption lock.
@Suite("Redeeming the refresh token: one retry with a newer token, a bounded wait for the lock")
struct RedemptionTests {
    /// A provider stand-in that refuses every refresh token but `good`, and remembers what it was given.
    final class ScriptedRedeemer: Sendable {
        let good: String
        let refusal: TokenError
        private let seen = Mutex<[String]>([])

        init(good: String, refusal: TokenError = .signInRequired(reason: "invalid_grant")) {
            self.good = good
            self.refusal = refusal
        }

        var attempts: [String] { seen.withLock { $0 } }

        func redeem(_ refreshToken: String) throws(TokenError) -> Redemption {
            seen.withLock { $0.append(refreshToken) }
            guard refreshToken == good else { throw refusal }
            let now = Date()
            let token = AccessToken(
                value: "access", scopes: ScopeSet(["api://a/Read"]), expiresOn: now.addingTimeInterval(3600),
                issuedAt: now)
            return Redemption(accessToken: token, refreshToken: "rotated", identity: nil)
        }
    }

    @Test("invalid_grant, and a newer refresh token where the newest is kept: that one is redeemed, once")
    func retriesWithTheNewerToken() async throws {
        let provider = ScriptedRedeemer(good: "rt-2")
        let redemption = try await Redemption.redeemingLatest(
            "rt-1", latest: { "rt-2" }, redeem: { (token: String) throws(TokenError) in try provider.redeem(token) })
        #expect(redemption.refreshToken == "rotated")
        #expect(provider.attempts == ["rt-1", "rt-2"])
    }

    @Test(
        "no newer refresh token, a newer one refused too, or a failure that is not invalid_grant: no further request",
        arguments: [
            ("rt-1", TokenError.signInRequired(reason: "invalid_grant"), ["rt-1"]),
            ("rt-2", .signInRequired(reason: "invalid_grant"), ["rt-1", "rt-2"]),
            ("rt-2", .providerUnavailable(reason: "down", retryAfterSeconds: 5), ["rt-1"]),
        ])
    func noEndlessRetry(latest: String, refusal: TokenError, expected: [String]) async throws {
        let provider = ScriptedRedeemer(good: "never", refusal: refusal)
        await #expect(throws: refusal) {
            try await Redemption.redeemingLatest(
                "rt-1", latest: { latest }, redeem: { (token: String) throws(TokenError) in try provider.redeem(token) }
            )
        }
        #expect(provider.attempts == expected)
    }

    @Test("a second holder waits; past its bound it goes ahead without the lock and says so; then the lock is free")
    func boundedWait() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try scratch.state.prepare()
        let lock = RedemptionLock(store: scratch.store("shared"))
        let (held, holding) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        try await withTimeout(waitingFor: "the holder and the second holder") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await lock.withLock { outcome in
                        #expect(outcome == .held)
                        holding.yield()
                        for await _ in released { break }
                    }
                }
                for await _ in held { break }
                let waited = Mutex(false)
                let outcome = await lock.withLock(
                    maximumWait: .milliseconds(30), waiting: { waited.withLock { $0 = true } }, { $0 })
                #expect(outcome == .waitExceeded)
                #expect(waited.withLock { $0 })
                release.yield()
                try await group.waitForAll()
            }
        }
        #expect(await lock.withLock(maximumWait: .zero) { $0 } == .held)
    }

    @Test("a task cancelled while it waits (a shutdown) stops at once, and not as if the wait had run out")
    func cancelledWait() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        let lock = RedemptionLock(store: scratch.store("shared"))
        let (held, holding) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let (waiting, waits) = AsyncStream<Void>.makeStream()
        try await withTimeout(waitingFor: "the holder and the cancelled waiter") {
            try await withThrowingTaskGroup(of: Void.self) { holder in
                holder.addTask {
                    await lock.withLock { _ in
                        holding.yield()
                        for await _ in released { break }
                    }
                }
                for await _ in held { break }
                let outcome = await withTaskGroup(of: RedemptionLock.Outcome.self) { waiter in
                    waiter.addTask {
                        await lock.withLock(maximumWait: .seconds(600), waiting: { waits.yield() }) { $0 }
                    }
                    for await _ in waiting { break }
                    // Only the waiter is cancelled: the holder keeps the lock throughout.
                    waiter.cancelAll()
                    return await waiter.next()
                }
                #expect(outcome == .cancelled)
                release.yield()
                try await holder.waitForAll()
            }
        }
    }
}
