import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens

@testable import BearerDataPlane

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
