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

/// Which paths under a discovered route are OAuth metadata, never forwarded (#25 item 8).
@Suite struct DiscoveredRouteGateTests {
    @Test(arguments: [
        ("/.well-known/oauth-protected-resource", true), ("/.well-known/oauth-authorization-server/x", true),
        ("/.well-known/openid-configuration", true), ("/.WELL-KNOWN/OAuth-Protected-Resource", true),
        ("/%2Ewell-known/oauth%2dprotected-resource", true), ("//.well-known//oauth-x", true),
        ("/.well-known/security.txt", false), ("/tools/.well-known/oauth-x", false), ("", false), ("/", false),
        ("/.well-known", false),
    ])
    func discoveredRoutesHideTheOAuthMetadataPaths(remainder: String, hidden: Bool) {
        #expect(DiscoveredRouteGate.isOAuthMetadata(remainder[...]) == hidden)
    }

    @Test(arguments: [
        ("/register", true), ("/authorize", true), ("/token", true), ("/Token/", true), ("/%72egister", true),
        ("/.well-known/oauth-authorization-server", true), ("/.well-known/openid-configuration", true),
        ("/.well-known/oauth-authorization-server/x", true), ("/register/x", false), ("/tokens", false),
        ("/.well-known/oauth-protected-resource", false), ("/", false), ("", false),
    ])
    func theOAuthFallbacksOfAClientsOwnSignIn(path: String, fallback: Bool) {
        #expect(DiscoveredRouteGate.isClientOAuthFallback(path[...]) == fallback)
    }
}
