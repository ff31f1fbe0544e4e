import Foundation
import NIOHTTP1
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

/// A discovered route's upstream answering `403` `insufficient_scope` (RFC 6750 §3.1; #25 item 5): the proxy answers
/// with a problem naming the command that signs in for what the token has and what the challenge asks for, and a
/// bearer route's `403` passes through as it always did.
@Suite("End to end: step-up on a discovered route")
struct DiscoveredStepUpTests {
    @Test("403 insufficient_scope: a problem naming login ROUTE --scopes with the union; after that login, through")
    func stepUpNamesTheCommand() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.challengeScope = "mcp:read"
        fake.requiredScopes = ["mcp:read", "mcp:write"]
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let first = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            #expect(first.scopes == ["mcp:read"])
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let refused = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(refused.status == .forbidden)
                let problem = try refused.jsonObject()
                #expect(problem["type"] as? String == "urn:bearer-proxy:problem:step-up-required")
                let detail = try #require(problem["detail"] as? String)
                #expect(detail.contains("bearer-proxy login /a --scopes 'mcp:read mcp:write'"), "\(detail)")
                // Asked again before that sign-in: the same answer, and no refresh (it would not widen anything).
                let forms = server.tokenForms.count
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .forbidden)
                #expect(server.tokenForms.count == forms)
                _ = try await DiscoveredSignInTests.signIn(
                    server, state: scratch.state, scopes: ["mcp:read", "mcp:write"]
                ).get()
                #expect(server.authorizeQueries.last?["scope"] == "mcp:read mcp:write")
                let through = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(through.status == .ok)
            }
        }
    }

    @Test("a bearer route's 403 insufficient_scope passes through untouched")
    func bearerRoutePassesThrough() async throws {
        let challenge = #"Bearer error="insufficient_scope", scope="more""#
        try await ProxyHarness.with(upstream: { _ in
            .respond(status: 403, headers: [("www-authenticate", challenge)], text: "upstream's own")
        }) { proxy, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
            #expect(response.status == .forbidden)
            #expect(String(decoding: response.body, as: UTF8.self) == "upstream's own")
        }
    }

    @Test(
        "the step-up scopes: the challenge's and the granted ones, sorted; none without insufficient_scope or a scope",
        arguments: [
            (#"Bearer error="insufficient_scope", scope="b c""#, ["a", "b"], ["a", "b", "c"] as [String]?),
            (#"Bearer error="insufficient_scope""#, ["a"], nil),
            (#"Bearer error="invalid_token", scope="b""#, ["a"], nil),
            (#"Basic realm="x", Bearer error="insufficient_scope", scope="b""#, [], ["b"]),
            // A quote or backslash would escape the pasted command's quoting: such a scope is dropped.
            (#"Bearer error="insufficient_scope", scope="x'y $(id)""#, ["urn:bearer-proxy:discovered"], ["$(id)"]),
        ])
    func stepUpScopes(challenge: String, granted: [String], expected: [String]?) {
        let headers = HTTPHeaders([("www-authenticate", challenge)])
        #expect(StepUpScopes.requested(by: headers, granted: Set(granted)) == expected)
    }
}
