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

/// Runs `body` with a fake identity provider, shutting it down afterwards whatever happens.
func withIdentityProvider<T>(
    _ configuration: FakeIdentityProvider.Configuration = .init(), _ body: (FakeIdentityProvider) async throws -> T
) async throws -> T {
    let provider = try await FakeIdentityProvider.start(configuration)
    do {
        let result = try await body(provider)
        try await provider.shutdown()
        return result
    } catch {
        try? await provider.shutdown()
        throw error
    }
}

/// `routes.json` account objects for the fake provider.
enum TestAccounts {
    static let refreshTokenVariable = "TEST_REFRESH_TOKEN"
    static let secretVariable = "TEST_CLIENT_SECRET"

    static func refreshToken(_ provider: FakeIdentityProvider) -> String {
        #"{ "flow": "refresh-token", "authority": "\#(provider.authority)", "#
            + #""clientId": "\#(FakeIdentityProvider.Client.publicClientID)", "#
            + #""refreshTokenEnv": "\#(refreshTokenVariable)" }"#
    }

    static func clientSecret(_ provider: FakeIdentityProvider, method: String = "post", issuer: Bool = false) -> String
    {
        let endpoint = issuer ? #""issuer": "\#(provider.oidcIssuer)""# : #""authority": "\#(provider.authority)""#
        return #"{ "flow": "client-credentials", \#(endpoint), "#
            + #""clientId": "\#(FakeIdentityProvider.Client.confidentialClientID)", "#
            + #""clientSecretEnv": "\#(secretVariable)", "clientAuthentication": "\#(method)" }"#
    }

    static func certificate(_ provider: FakeIdentityProvider, algorithm: String, pair: CertificateFixtures.Pair)
        -> String
    {
        #"{ "flow": "client-credentials", "authority": "\#(provider.authority)", "#
            + #""clientId": "\#(FakeIdentityProvider.Client.confidentialClientID)", "#
            + #""certificate": { "certFile": "\#(pair.certificateFile)", "keyFile": "\#(pair.keyFile)", "#
            + #""algorithm": "\#(algorithm)" } }"#
    }

    static func environment(_ provider: FakeIdentityProvider) -> [String: String] {
        [
            refreshTokenVariable: provider.issueRefreshToken(for: .alice),
            secretVariable: FakeIdentityProvider.Client.confidentialClientSecret,
        ]
    }
}

/// One route `/api` to `upstream` with `scopes`.
func route(_ prefix: String = "/api", to upstream: FakeUpstream, scopes: [String]) -> String {
    let list = scopes.map { "\"\($0)\"" }.joined(separator: ", ")
    return #"{ "prefix": "\#(prefix)", "upstream": "\#(upstream.baseURL)", "scopes": [\#(list)] }"#
}
