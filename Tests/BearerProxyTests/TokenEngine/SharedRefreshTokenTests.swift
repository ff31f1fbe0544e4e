import Foundation
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

/// SPEC §7 "Several processes, one account", with two account runtimes on one state directory standing for two
/// processes — without the once-a-second poll of the file (no ``TokenMaintenance``), so only the re-read under the
/// redemption lock can make them agree. The provider rotates refresh tokens with no reuse grace and revokes the
/// whole family on reuse: a single redemption of a retired token signs everyone out.
@Suite("Several processes, one account: each refresh token is redeemed once, each scope set asked for once")
struct SharedRefreshTokenTests {
    static let scopes = ["api://one/Read", "api://two/Read", "api://three/Read"]
    /// Routes `/r0`, `/r1`, `/r2`, one per scope set.
    static var routes: String {
        let routes = scopes.enumerated().map { index, scope in
            #"{ "prefix": "/r\#(index)", "upstream": "https://r\#(index).example", "scopes": ["\#(scope)"] }"#
        }
        return "[" + routes.joined(separator: ", ") + "]"
    }

    static func scopeSet(_ index: Int) -> ScopeSet { ScopeSet([scopes[index]]) }

    static func strictProvider() -> FakeIdentityProvider.Configuration {
        var configuration = FakeIdentityProvider.Configuration()
        configuration.supersededRefreshTokens = .invalidRevokingFamily
        return configuration
    }

    /// Two runtimes of the `refresh-token` flow on one state directory, both started with the environment's
    /// refresh token, as two processes started together.
    static func withTwoProcesses(
        _ body: (FakeIdentityProvider, AccountRuntime, AccountRuntime) async throws -> Void
    ) async throws {
        try await withIdentityProvider(strictProvider()) { provider in
            let state = PersistenceIntegrationTests.temporaryState()
            let environment = TestAccounts.environment(provider)
            let account = TestAccounts.refreshToken(provider)
            try await SignInHarness.with(account: account, routes: routes, environment: environment, state: state) {
                first in
                try await SignInHarness.with(
                    account: account, routes: routes, environment: environment, state: state
                ) { second in
                    try await body(provider, first, second)
                }
            }
        }
    }

    @Test("a process whose refresh token another process rotated takes the rotated one from the file, no restart")
    func rotatedElsewhere() async throws {
        try await Self.withTwoProcesses { provider, first, second in
            _ = try await first.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            // `second` still holds the environment's refresh token, which the provider has retired.
            _ = try await second.tokens.accessTokenWithinLimit(for: Self.scopeSet(1))
            _ = try await first.tokens.accessTokenWithinLimit(for: Self.scopeSet(2))
            #expect(provider.refusedRedemptionCount == 0)
            #expect(provider.tokenRequests.map(\.refreshTokenID) == ["rt1", "rt2", "rt3"])
            #expect(first.session.refreshToken.flatMap(provider.refreshTokenID) == "rt4")
        }
    }

    @Test("an access token another process obtained is used: the provider is asked once per scope set")
    func tokenFromAnotherProcess() async throws {
        try await Self.withTwoProcesses { provider, first, second in
            let obtained = try await first.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            let reused = try await second.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            // Compared as a Bool: a failure must not print the tokens.
            let same = reused.value == obtained.value
            #expect(same)
            #expect(provider.refreshRedemptionCount(forScope: Self.scopes[0]) == 1)
        }
    }

    @Test("a process's writes keep the tokens other processes stored for other scope sets")
    func writesKeepOtherTokens() async throws {
        try await Self.withTwoProcesses { provider, first, second in
            _ = try await first.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            _ = try await second.tokens.accessTokenWithinLimit(for: Self.scopeSet(1))
            second.persistence?.flush()
            _ = try await second.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            #expect(provider.refreshRedemptionCount(forScope: Self.scopes[0]) == 1)
        }
    }

    @Test("a login that signs nobody in (refresh-token flow) shares its redemptions at once, not at its one write")
    func loginWithoutSignIn() async throws {
        try await Self.withTwoProcesses { provider, serve, login in
            try await login.inOneWrite {
                _ = try await login.fetchRouteTokens()
                // A serve running meanwhile finds the rotated refresh token and the tokens in the file.
                _ = try await serve.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            }
            #expect(provider.refusedRedemptionCount == 0)
            #expect(provider.refreshRedemptionCount(forScope: Self.scopes[0]) == 1)
        }
    }

    @Test("a process's own redemption is not reloaded from the file as another's change (which ends back-offs)")
    func ownWriteIsNoChange() async throws {
        try await Self.withTwoProcesses { provider, serve, _ in
            provider.enqueue(.throttle(retryAfter: 60), forScope: Self.scopes[1])
            await #expect(throws: TokenError.self) {
                try await serve.tokens.accessTokenWithinLimit(for: Self.scopeSet(1))
            }
            _ = try await serve.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            serve.persistence?.reloadIfChanged(tokens: serve.tokens, session: serve.session)
            // Still backing off: the failure is answered again without asking the provider.
            await #expect(throws: TokenError.self) {
                try await serve.tokens.accessTokenWithinLimit(for: Self.scopeSet(1))
            }
            #expect(provider.refreshRedemptionCount(forScope: Self.scopes[1]) == 1)
        }
    }

    @Test("the file poll takes over another process's write even when this process has written since")
    func pollAfterOwnWrite() async throws {
        try await Self.withTwoProcesses { provider, first, second in
            let token = try await second.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
            first.persistence?.save(.rejected(value: "a token nobody has"))
            first.persistence?.flush()
            first.persistence?.reloadIfChanged(tokens: first.tokens, session: first.session)
            let taken = first.tokens.cachedToken(for: Self.scopeSet(0))?.value == token.value
            #expect(taken, "the other process's token")
            #expect(first.session.refreshToken.flatMap(provider.refreshTokenID) == "rt2")
        }
    }

    @Test("--no-persist: no file, but the process's own requests for three scope sets redeem one after another")
    func withoutFile() async throws {
        try await withIdentityProvider(Self.strictProvider()) { provider in
            try await SignInHarness.with(
                account: TestAccounts.refreshToken(provider), routes: Self.routes,
                environment: TestAccounts.environment(provider)
            ) { process in
                #expect(process.persistence == nil)
                try await withTimeout(waitingFor: "150 concurrent token requests") {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<3 {
                            for _ in 0..<50 {
                                group.addTask {
                                    _ = try await process.tokens.accessTokenWithinLimit(for: Self.scopeSet(index))
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                #expect(provider.refusedRedemptionCount == 0)
                for scope in Self.scopes { #expect(provider.refreshRedemptionCount(forScope: scope) == 1) }
            }
        }
    }

    @Test("300 concurrent requests in each of two processes for three scope sets: one token request per scope set")
    func concurrentProcesses() async throws {
        try await Self.withTwoProcesses { provider, first, second in
            let values = try await withTimeout(waitingFor: "600 concurrent token requests in two processes") {
                try await withThrowingTaskGroup(of: (Int, String).self) { group in
                    for runtime in [first, second] {
                        for index in 0..<3 {
                            for _ in 0..<100 {
                                group.addTask {
                                    (
                                        index,
                                        try await runtime.tokens.accessTokenWithinLimit(for: Self.scopeSet(index)).value
                                    )
                                }
                            }
                        }
                    }
                    return try await group.reduce(into: [Int: Set<String>]()) { $0[$1.0, default: []].insert($1.1) }
                }
            }
            #expect(provider.refusedRedemptionCount == 0)
            for index in 0..<3 {
                #expect(values[index]?.count == 1, "scope set \(index): one token for both processes")
                #expect(provider.refreshRedemptionCount(forScope: Self.scopes[index]) == 1)
            }
        }
    }

    @Test("a token refreshed in the background by one process is not refreshed again by the other")
    func backgroundRefreshOnce() async throws {
        let clock = TestClock()
        try await withIdentityProvider(Self.strictProvider()) { provider in
            let state = PersistenceIntegrationTests.temporaryState()
            let environment = TestAccounts.environment(provider)
            let account = TestAccounts.refreshToken(provider)
            try await SignInHarness.with(
                account: account, routes: Self.routes, environment: environment, state: state, now: { clock.now }
            ) { first in
                _ = try await first.tokens.accessTokenWithinLimit(for: Self.scopeSet(0))
                try await SignInHarness.with(
                    account: account, routes: Self.routes, environment: environment, state: state,
                    now: { clock.now }
                ) { second in
                    // Both hold the token from the file; past its half-life both refresh it.
                    #expect(second.tokens.cachedToken(for: Self.scopeSet(0)) != nil)
                    clock.advance(1900)
                    #expect(await first.tokens.refreshDueTokens() == 1)
                    #expect(await second.tokens.refreshDueTokens() == 1)
                    let same =
                        first.tokens.cachedToken(for: Self.scopeSet(0))?.value
                        == second.tokens.cachedToken(for: Self.scopeSet(0))?.value
                    #expect(same, "one refreshed token for both")
                    #expect(provider.refreshRedemptionCount(forScope: Self.scopes[0]) == 2)
                    #expect(provider.refusedRedemptionCount == 0)
                }
            }
        }
    }
}
