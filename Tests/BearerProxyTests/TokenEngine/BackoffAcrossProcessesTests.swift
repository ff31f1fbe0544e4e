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

/// Another process writing the token cache file (its own tokens, the same account and refresh token) must not
/// reset this process's back-off: with several processes writing once in a while, a failing provider would be asked
/// again after every write instead of after its `Retry-After` (SPEC §7: never hammer it).
@Suite("Token cache file: another process's tokens keep this process's back-off")
struct BackoffAcrossProcessesTests {
    @Test("a 503 with Retry-After is not asked again after another process stores a token for another scope set")
    func backoffSurvivesOtherWrites() async throws {
        try await withIdentityProvider { provider in
            provider.setRefreshTokenRotation(false)  // the other process's write changes tokens, not the credential
            let state = PersistenceIntegrationTests.temporaryState()
            let environment = TestAccounts.environment(provider)
            let account = TestAccounts.refreshToken(provider)
            try await SignInHarness.with(account: account, environment: environment, state: state) { serve in
                try await SignInHarness.with(account: account, environment: environment, state: state) { other in
                    // Signed in and working: the account's identity is known and in the file.
                    _ = try await serve.tokens.accessTokenWithinLimit(for: ScopeSet([SignInHarness.graphScope]))
                    serve.persistence?.flush()
                    provider.setPersistentFailure(.unavailableRetryAfter(30), forScope: SignInHarness.todoScope)
                    let todo = ScopeSet([SignInHarness.todoScope])
                    await #expect(throws: TokenError.self) { try await serve.tokens.accessTokenWithinLimit(for: todo) }
                    let asked = provider.tokenRequests.count
                    // The other process gets a token for a scope set of its own and writes it to the file.
                    let reports = ScopeSet(["api://reports/Reports.Read"])
                    _ = try await other.tokens.accessTokenWithinLimit(for: reports)
                    other.persistence?.flush()
                    serve.persistence?.reloadIfChanged(tokens: serve.tokens, session: serve.session)
                    #expect(
                        serve.tokens.cachedToken(for: reports) != nil, "the other process's write was not taken over")
                    // Still backing off for the failing scope set: the provider is not asked again.
                    await #expect(throws: TokenError.self) { try await serve.tokens.accessTokenWithinLimit(for: todo) }
                    #expect(provider.tokenRequests.count == asked + 1, "only the other process's request")
                }
            }
        }
    }
}
