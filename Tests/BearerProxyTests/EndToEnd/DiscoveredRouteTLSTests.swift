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

/// A discovered route whose authorization server is trusted only through the route's own `tls.caFile` (#25): the
/// sign-in, the requests and every refresh trust that file, not only the global one.
@Suite("End to end: a discovered route's own CA file")
struct DiscoveredRouteTLSTests {
    @Test("a refresh at an authorization server only the route's caFile trusts succeeds")
    func refreshTrustsTheRoutesCAFile() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.preregistered = ["mine"]
        try await DiscoveredSignInTests.withServer(fake, tls: true) { server, scratch in
            // The sign-in `login ROUTE` would store (its own TLS is DiscoveredSignInTests' subject): an expired
            // access token and a refresh token the fake knows. One TLS connection to the authorization server is
            // left, the refresh's: each one is slow in a debug build on a loaded machine.
            let (access, refresh) = server.issueTokens(client: "mine", resource: server.resource)
            let store = DiscoveredSignInStore(directory: scratch.state)
            let key = DiscoveredSignInKey(issuer: server.baseURL, clientID: "mine", resource: server.resource)
            try store.updateSignIn(key) {
                $0 = PersistedDiscoveredSignIn(
                    key: key, clientKind: "configured", tokenEndpoint: server.baseURL + "/token", scopes: [],
                    refreshToken: refresh, accessToken: access, expiresOn: Date(timeIntervalSinceNow: -60))
            }
            try store.setRouteKey(key, upstream: server.resource)
            // No global caFile: only the route trusts the test CA.
            let routes =
                #"[{ "prefix": "/a", "upstream": "\#(server.resource)", "auth": "discover", "#
                + #""discovery": { "clientId": "mine" }, "tls": { "caFile": "\#(TLSFixtures.caFile)" } }]"#
            try await ProxyHarness.with(routes: routes, stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
                #expect(try response.jsonObject()["audience"] as? String == server.resource)
            }
            #expect(server.tokenForms.count == 1)
            #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
        }
    }
}
