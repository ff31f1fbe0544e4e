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

/// The data plane's share of discovered routes (#25), slice 1: nothing is forwarded before a sign-in, the answer
/// comes at once and names the command, the OAuth metadata paths are never forwarded, and a bearer route's 401
/// starts no discovery.
@Suite("End to end: discovered routes")
struct DiscoveredRouteTests {
    static func route(_ upstream: FakeUpstream) -> String {
        #"[{ "prefix": "/mcp", "upstream": "\#(upstream.baseURL)/mcp", "auth": "discover" }]"#
    }

    @Test("a request before anyone signed in gets 401 naming `bearer-proxy login ROUTE`, and nothing is forwarded")
    func signInRequired() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(routes: Self.route(upstream)) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/mcp/tools?x=1")
                #expect(response.status == .unauthorized)
                #expect(response.header("content-type") == "application/problem+json")
                let problem = try response.jsonObject()
                #expect(problem["type"] as? String == "urn:bearer-proxy:problem:sign-in-required")
                #expect((problem["detail"] as? String)?.contains("bearer-proxy login /mcp") == true)
                // No challenge of the proxy's own: a local client must not start an OAuth flow against it.
                #expect(response.header("www-authenticate") == nil)
            }
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test(
        "the OAuth metadata paths under a discovered route are answered 404 and never forwarded",
        arguments: [
            "/mcp/.well-known/oauth-protected-resource", "/mcp/.well-known/oauth-authorization-server/x",
            "/mcp/.well-known/openid-configuration", "/mcp/.well-known/OAUTH%2Dprotected-resource",
        ])
    func metadataPathsAreHidden(path: String) async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(routes: Self.route(upstream)) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: path)
                #expect(response.status == .notFound)
                #expect(
                    try response.jsonObject()["type"] as? String
                        == "urn:bearer-proxy:problem:oauth-metadata-not-forwarded")
            }
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test(
        "root-level metadata for a discovered route (RFC 9728 §3.1) is answered 404, even with a `/` route beside it",
        arguments: [
            "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server/mcp/x",
            "/.well-known/openid-configuration/mcp", "/%2Ewell-known/OAuth-Protected-Resource/mcp",
            "/.well-known/oauth-protected-resource//mcp/",
        ])
    func rootLevelMetadataIsHidden(path: String) async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = """
                [{ "prefix": "/mcp", "upstream": "\(upstream.baseURL)/mcp", "auth": "discover" },
                 { "prefix": "/", "upstream": "\(upstream.baseURL)/other", "scopes": ["api://other/R"] }]
                """
            try await ProxyHarness.with(routes: routes) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: path)
                #expect(response.status == .notFound)
                #expect(
                    try response.jsonObject()["type"] as? String
                        == "urn:bearer-proxy:problem:oauth-metadata-not-forwarded")
                // The same suffix for a path no discovered route owns is the `/` route's business.
                let other = try await TestClient.send(port: proxy.port, uri: "/.well-known/oauth-protected-resource/x")
                #expect(other.status == .ok)
            }
            #expect(upstream.requests.map(\.head.uri) == ["/other/.well-known/oauth-protected-resource/x"])
        }
    }

    @Test(
        "an OAuth client's own sign-in fallbacks at the proxy's origin are told the command, and start nothing",
        arguments: [
            "/register", "/authorize?response_type=code&client_id=x", "/token",
            "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/REGISTER",
        ])
    func clientOAuthFallbacksNameTheCommand(path: String) async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(routes: Self.route(upstream)) { proxy in
                let response = try await TestClient.send(
                    port: proxy.port, method: path == "/register" || path == "/token" ? "POST" : "GET", uri: path)
                #expect(response.status == .notFound)
                #expect(response.header("www-authenticate") == nil)
                let problem = try response.jsonObject()
                #expect(problem["type"] as? String == "urn:bearer-proxy:problem:client-oauth-not-offered")
                #expect((problem["detail"] as? String)?.contains("bearer-proxy login /mcp") == true)
                // Any other path no route matches is still no route.
                let other = try await TestClient.send(port: proxy.port, uri: "/registered")
                #expect(try other.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:no-route")
            }
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("without discovered routes the fallbacks are no route, as any other path")
    func fallbacksWithoutDiscoveredRoutes() {
        let problem = ProxyConnectionHandler.noRoute("/register", bindings: [])
        #expect(problem == .noRoute(path: "/register"))
    }

    @Test("a bearer route whose upstream answers 401 with resource_metadata starts no discovery")
    func bearerRouteStartsNothing() async throws {
        try await withUpstream({ _ in .respond(status: 200, text: "{}") }) { metadata in
            let challenge = #"Bearer resource_metadata="\#(metadata.baseURL)/.well-known/oauth-protected-resource""#
            try await ProxyHarness.with(
                upstream: { _ in .respond(status: 401, headers: [("www-authenticate", challenge)], text: "no") }
            ) { proxy, upstream in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                // The upstream's own answer, unchanged; one request, no replay.
                #expect(response.status == .unauthorized)
                #expect(response.header("www-authenticate") == challenge)
                #expect(upstream.requests.count == 1)
            }
            #expect(metadata.requests.isEmpty)
        }
    }
}
