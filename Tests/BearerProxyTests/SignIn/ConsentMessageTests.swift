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

@Suite("consent_required (AADSTS65001) says to grant consent, not merely to sign in again")
struct ConsentMessageTests {
    @Test("a refresh for an API nobody consented to: 401 whose detail names consent")
    func consentRequired() async throws {
        try await withIdentityProvider { provider in
            provider.enqueue(.consentRequired)
            try await SignInHarness.with(
                account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
            ) { account in
                do {
                    _ = try await account.tokens.accessTokenWithinLimit(for: ScopeSet([SignInHarness.todoScope]))
                    Issue.record("got a token without consent")
                } catch let error as TokenError {
                    guard case .signInRequired(let reason) = error else {
                        Issue.record("expected sign-in required, got \(error)")
                        return
                    }
                    #expect(reason.contains("No consent for these scopes"))
                    #expect(reason.contains("grant admin consent"))
                    #expect(ProxyError(error).status == .unauthorized)
                }
            }
        }
    }
}
