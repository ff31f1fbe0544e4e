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

/// A discovered route's upstream refusing its token, on real sockets (#25 item 8): whatever the proxy does not
/// replay is answered with its own `401` naming `bearer-proxy login ROUTE`; the upstream's challenge, whose
/// `resource_metadata` would start a local client's own OAuth, never reaches the client.
@Suite("End to end: a discovered route's refused token is answered by the proxy")
struct DiscoveredRefusalTests {
    /// Checks that `response` is the proxy's refused-token problem for `/a`, saying `why`, with nothing of the
    /// upstream's challenge.
    static func expectProxyProblem(_ response: TestResponse, saying why: String) throws {
        #expect(response.status == .unauthorized)
        #expect(response.header("www-authenticate") == nil)
        #expect(response.header("content-type") == "application/problem+json")
        let problem = try response.jsonObject()
        #expect(problem["type"] as? String == "urn:bearer-proxy:problem:sign-in-required")
        let detail = try #require(problem["detail"] as? String)
        #expect(detail.contains(why) && detail.hasSuffix("bearer-proxy login /a"))
        #expect(!response.bodyText.contains("resource_metadata"))
    }

    @Test("an upstream refusing the replayed token too: the second 401 is the proxy's, not the upstream's challenge")
    func refusedAfterReplay() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await DiscoveredRediscoveryTests.withSignedInProxy(server, scratch) { proxy in
                for bare in [false, true] {
                    server.update {
                        $0.refusesTokens = true
                        $0.bareChallenge = bare
                    }
                    let forms = server.tokenForms.count
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    try Self.expectProxyProblem(response, saying: "refused the new token it was sent again with too")
                    // The one replay took place, with a refreshed token (the first time: later ones are bounded).
                    if !bare { #expect(server.tokenForms.count == forms + 1) }
                }
            }
        }
    }

    @Test("a refused POST whose body is over 64 KiB is not replayed: the proxy's problem says so")
    func refusedLargeBody() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await DiscoveredRediscoveryTests.withSignedInProxy(server, scratch) { proxy in
                server.revokeAccessTokens()
                let forms = server.tokenForms.count
                let response = try await TestClient.send(
                    port: proxy.port, method: "POST", uri: "/a/x",
                    body: .stream(length: ExchangeStateMachine.replayLimit + 1, chunked: false))
                try Self.expectProxyProblem(response, saying: "this request cannot be sent again")
                #expect(server.tokenForms.count == forms)
                // The refused token is dropped, so the next request gets a refreshed one and goes through.
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
            }
        }
    }
}
