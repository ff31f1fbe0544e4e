import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Foundation
import Testing

/// A discovered route whose authorization server is trusted only through the route's own `tls.caFile` (#25): the
/// sign-in, the requests and every refresh trust that file, not only the global one.
@Suite("End to end: a discovered route's own CA file")
struct DiscoveredRouteTLSTests {
    @Test("a refresh at an authorization server only the route's caFile trusts succeeds")
    func refreshTrustsTheRoutesCAFile() async throws {
        try await DiscoveredSignInTests.withServer(tls: true) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state, caFile: TLSFixtures.caFile).get()
            let store = DiscoveredSignInStore(directory: scratch.state)
            let key = try #require(try store.routeKey(upstream: server.resource))
            try store.updateSignIn(key) { $0?.expiresOn = Date(timeIntervalSinceNow: -60) }
            let formsBefore = server.tokenForms.count
            // No global caFile: only the route trusts the test CA.
            let routes =
                #"[{ "prefix": "/a", "upstream": "\#(server.resource)", "auth": "discover", "#
                + #""tls": { "caFile": "\#(TLSFixtures.caFile)" } }]"#
            try await ProxyHarness.with(routes: routes, stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
                #expect(try response.jsonObject()["audience"] as? String == server.resource)
            }
            #expect(server.tokenForms.count == formsBefore + 1)
            #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
        }
    }
}
