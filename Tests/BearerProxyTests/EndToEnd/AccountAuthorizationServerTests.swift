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

/// A discovered route that says its authorization server is the account's own (`"authorizationServer": "account"`,
/// #25 item 7 — Microsoft Entra, which has no dynamic registration): its upstream's metadata (RFC 9728) must name the
/// account's issuer, and the route's tokens then come from the account's refresh token and client — no registration,
/// no second sign-in — with `resource` sent only when it is the scopes' own resource. The fake identity provider is
/// Entra-shaped: a `resource` other than the scopes' is refused (AADSTS9010010).
@Suite("End to end: a discovered route of the account's own authorization server")
struct AccountAuthorizationServerTests {
    /// A protected resource at `/mcp` whose metadata names `issuer` and `scopes` (`{origin}` is its own origin).
    static func resource(issuer: String, scopes: [String]) -> @Sendable (RequestHead) -> UpstreamBehaviour {
        { head in
            let origin = "http://" + (head.header("host") ?? "")
            if head.uri == "/.well-known/oauth-protected-resource/mcp" {
                let listed = scopes.map { "\"" + $0.replacingOccurrences(of: "{origin}", with: origin) + "\"" }
                return .respond(
                    status: 200, headers: [("content-type", "application/json")],
                    text: #"{"resource": "\#(origin)/mcp", "authorization_servers": ["\#(issuer)"], "#
                        + #""scopes_supported": [\#(listed.joined(separator: ", "))]}"#)
            }
            guard head.header("authorization") != nil else {
                let metadata = #"Bearer resource_metadata="\#(origin)/.well-known/oauth-protected-resource/mcp""#
                return .respond(status: 401, headers: [("www-authenticate", metadata)], text: "")
            }
            if head.uri.hasPrefix("/mcp/admin") {
                let challenge = #"Bearer error="insufficient_scope", scope="api://mcp/Tools.Admin""#
                return .respond(status: 403, headers: [("www-authenticate", challenge)], text: "upstream's own")
            }
            return .respond(status: 200, text: "through")
        }
    }

    static func routes(_ upstream: FakeUpstream) -> String {
        #"[{ "prefix": "/m", "upstream": "\#(upstream.baseURL)/mcp", "auth": "discover", "#
            + #""discovery": { "authorizationServer": "account" } }]"#
    }

    /// Runs `body` with the identity provider, the resource and a proxy whose account is the provider's.
    static func with(
        scopes: [String], issuer: ((FakeIdentityProvider) -> String)? = nil,
        _ body: (FakeIdentityProvider, FakeUpstream, ProxyHarness) async throws -> Void
    ) async throws {
        try await withIdentityProvider { idp in
            let named = issuer?(idp) ?? idp.issuer
            try await withUpstream(Self.resource(issuer: named, scopes: scopes)) { upstream in
                let scratch = try StoreScratchDirectory()
                defer { scratch.remove() }
                try await ProxyHarness.with(
                    routes: Self.routes(upstream), account: TestAccounts.refreshToken(idp),
                    environment: TestAccounts.environment(idp), stateDirectory: scratch.state
                ) { proxy in try await body(idp, upstream, proxy) }
            }
        }
    }

    @Test("the account's refresh token and client, no registration: the scopes' audience, no resource for another one")
    func accountTokenWithoutResource() async throws {
        try await Self.with(scopes: ["api://mcp/Tools.Read"]) { idp, upstream, proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/m/x")
            #expect(response.status == .ok)
            let forwarded = try #require(upstream.requests.last)
            #expect(try jwtClaims(forwarded.head.header("authorization"))["aud"] as? String == "api://mcp")
            let request = try #require(idp.tokenRequests.last)
            #expect(idp.tokenRequests.count == 1)
            #expect(request.grantType == "refresh_token")
            #expect(request.clientID == FakeIdentityProvider.Client.publicClientID)
            #expect(request.scopes.contains("api://mcp/Tools.Read"))
            // The metadata's resource (the upstream's URL) is not the scopes' (api://mcp): Entra would refuse it.
            #expect(request.parameters["resource"] == nil)
            // A second request: the route's cached token, no token request.
            #expect(try await TestClient.send(port: proxy.port, uri: "/m/y").status == .ok)
            #expect(idp.tokenRequests.count == 1)
            let status = try await TestClient.send(port: proxy.port, uri: "/-/status")
            let routes = try #require(try status.jsonObject()["routes"] as? [[String: Any]])
            let discovered = try #require(routes.first?["discovered"] as? [String: Any])
            #expect(discovered["state"] as? String == "signed-in" && discovered["clientKind"] as? String == "account")
            #expect(discovered["authorizationServer"] as? String == idp.issuer)
            #expect(discovered["scopes"] as? [String] == ["api://mcp/Tools.Read"])
        }
    }

    @Test("403 insufficient_scope passes through as on a bearer route: the account's token, no login ROUTE to name")
    func stepUpPassesThrough() async throws {
        try await Self.with(scopes: ["api://mcp/Tools.Read"]) { idp, upstream, proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/m/admin")
            #expect(response.status == .forbidden)
            #expect(String(decoding: response.body, as: UTF8.self) == "upstream's own")
        }
    }

    @Test("a resource that is the scopes' own resource is sent with the refresh (RFC 8707)")
    func resourceSentWhenItIsTheScopes() async throws {
        try await Self.with(scopes: ["{origin}/mcp/Tools.Read"]) { idp, upstream, proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/m/x")
            #expect(response.status == .ok)
            let request = try #require(idp.tokenRequests.last)
            #expect(request.parameters["resource"] == upstream.baseURL + "/mcp")
            let forwarded = try #require(upstream.requests.last)
            #expect(
                try jwtClaims(forwarded.head.header("authorization"))["aud"] as? String == upstream.baseURL + "/mcp")
        }
    }

    @Test("metadata naming another authorization server: the account's sign-in is used nowhere, the client is told why")
    func anotherAuthorizationServer() async throws {
        try await Self.with(scopes: ["api://mcp/Tools.Read"], issuer: { _ in "http://127.0.0.1:1/other/v2.0" }) {
            idp, upstream, proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/m/x")
            #expect(response.status == .internalServerError)
            let detail = try #require(try response.jsonObject()["detail"] as? String)
            #expect(
                detail.contains("http://127.0.0.1:1/other/v2.0") && detail.contains("not the account's"), "\(detail)")
            #expect(idp.tokenRequests.isEmpty)
            #expect(upstream.requests.allSatisfy { $0.head.header("authorization") == nil })
        }
    }

    @Test("the account's issuers: an issuer as written; an authority's v2.0 issuer, and its directory's once known")
    func accountIssuers() {
        #expect(
            IdentityEndpoint.issuer("https://id.example.com/").issuers(tenantID: "t") == ["https://id.example.com/"])
        #expect(
            IdentityEndpoint.authority("https://login.microsoftonline.com/organizations").issuers(tenantID: "abc")
                == [
                    "https://login.microsoftonline.com/organizations/v2.0",
                    "https://login.microsoftonline.com/abc/v2.0",
                ])
        #expect(
            IdentityEndpoint.authority("https://login.microsoftonline.com/abc").issuers(tenantID: "abc")
                == ["https://login.microsoftonline.com/abc/v2.0"])
    }

    @Test("configuration: \"account\" needs an OAuth account, and takes no client or redirect of its own")
    func configurationProblems() throws {
        let route =
            #"{ "prefix": "/m", "upstream": "https://mcp.example.com/mcp", "auth": "discover", "#
            + #""discovery": { "authorizationServer": "account", "clientId": "c" } }"#
        let problems = ConfigurationFixture.problems(
            ConfigurationFixture.account(#"{ "flow": "dev" }"#, routes: [route]))
        #expect(
            problems.contains { $0.path == "routes[0].discovery.clientId" && $0.message.contains("account's client") })
        #expect(
            problems.contains {
                $0.path == "routes[0].discovery.authorizationServer" && $0.message.contains("\"dev\"")
            },
            "\(problems)")
    }

    @Test(
        "without a state directory (--no-persist): the account's token, kept in memory, and no registration")
    func withoutStateDirectory() async throws {
        try await withIdentityProvider { idp in
            try await withUpstream(Self.resource(issuer: idp.issuer, scopes: ["api://mcp/Tools.Read"])) { upstream in
                try await ProxyHarness.with(
                    routes: Self.routes(upstream), account: TestAccounts.refreshToken(idp),
                    environment: TestAccounts.environment(idp)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/m/x")
                    #expect(response.status == .ok, "\(response.bodyText)")
                    let forwarded = try #require(upstream.requests.last)
                    #expect(try jwtClaims(forwarded.head.header("authorization"))["aud"] as? String == "api://mcp")
                    // The account's client and refresh token: one refresh, nothing registered.
                    #expect(idp.tokenRequests.map(\.grantType) == ["refresh_token"])
                    #expect(idp.tokenRequests.first?.clientID == FakeIdentityProvider.Client.publicClientID)
                    // Kept in memory: a second request takes the cached token.
                    #expect(try await TestClient.send(port: proxy.port, uri: "/m/y").status == .ok)
                    #expect(idp.tokenRequests.count == 1)
                    let status = try await TestClient.send(port: proxy.port, uri: "/-/status")
                    let routes = try #require(try status.jsonObject()["routes"] as? [[String: Any]])
                    let discovered = try #require(routes.first?["discovered"] as? [String: Any])
                    #expect(discovered["state"] as? String == "signed-in")
                    #expect(discovered["clientKind"] as? String == "account")
                }
            }
        }
    }

    @Test("without a state directory, a route signing in at its own authorization server still gets 401 naming login")
    func ownServerWithoutStateDirectory() async throws {
        try await withIdentityProvider { idp in
            try await withUpstream(Self.resource(issuer: idp.issuer, scopes: ["api://mcp/Tools.Read"])) { upstream in
                let routes = #"[{ "prefix": "/m", "upstream": "\#(upstream.baseURL)/mcp", "auth": "discover" }]"#
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(idp), environment: TestAccounts.environment(idp)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/m/x")
                    #expect(response.status == .unauthorized)
                    #expect(response.bodyText.contains("bearer-proxy login /m"))
                    #expect(upstream.requests.isEmpty && idp.tokenRequests.isEmpty)
                }
            }
        }
    }
}
