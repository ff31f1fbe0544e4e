@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

extension TokenCache {
    /// ``TokenCache/accessToken(for:claims:)`` as the tests call it: a token request that has not ended after
    /// ``TestLimits/wait`` fails its test with `TestSupportError.timedOut` instead of hanging the suite (a caller
    /// left waiting for a leader that never answers). The cache's own errors come out unchanged.
    func accessTokenWithinLimit(for scopes: ScopeSet, claims: String? = nil) async throws -> AccessToken {
        try await withTimeout(waitingFor: "a token for \(scopes)") {
            try await self.accessToken(for: scopes, claims: claims)
        }
    }
}
