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

@Suite("End to end: the proxy's own endpoints under /-/")
struct AdminEndpointTests {
    static let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:9/x", "scopes": ["api://a/R"] } ]"#

    @Test("health answers 200")
    func health() async throws {
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/-/health")
            #expect(response.status == .ok)
            #expect(try response.jsonObject()["status"] as? String == "ok")
        }
    }

    @Test("the discovery document sits at {issuer}/.well-known/openid-configuration and names the JWKS")
    func discovery() async throws {
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/-/.well-known/openid-configuration")
            #expect(response.status == .ok)
            let document = try response.jsonObject()
            let issuer = try #require(document["issuer"] as? String)
            #expect(issuer == "http://127.0.0.1:\(proxy.port)/-")
            #expect(document["jwks_uri"] as? String == issuer + "/jwks.json")
            let jwks = try await TestClient.send(port: proxy.port, uri: "/-/jwks.json")
            #expect(jwks.status == .ok)
            #expect(jwks.header("content-type") == "application/jwk-set+json")
            let keys = try #require(try jwks.jsonObject()["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            #expect(keys.first?["kty"] as? String == "EC")
            #expect(keys.first?["d"] == nil)  // never the private part
        }
    }

    @Test("echo reports method, path, query, body length and hash, and the token's claims — never the token")
    func echo() async throws {
        let routes =
            #"[ { "prefix": "/self", "upstream": "http://127.0.0.1:PORT/-/echo/s", "scopes": ["api://s/R"] } ]"#
        // The route's upstream is the proxy itself, as in the shipped routes.json; the port is known only once
        // the proxy listens, so the configuration is installed a second time with it.
        try await ProxyHarness.with(routes: Self.routes) { proxy in
            let configuration = try TestConfigurations.make(
                routes: routes.replacingOccurrences(of: "PORT", with: String(proxy.port)))
            let context = try ProxyContext(
                configuration: configuration, tokens: proxy.proxy.tokens,
                admin: AdminEndpoints(devIssuer: proxy.proxy.devIssuer), policy: SafetyPolicy(),
                timeouts: proxy.proxy.server.timeouts)
            proxy.proxy.current.install(.init(context: context, account: proxy.proxy.account))
            let response = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/self/hello?x=1&y=%2F", body: .text("hello"))
            #expect(response.status == .ok)
            let echo = try response.jsonObject()
            #expect(echo["method"] as? String == "POST")
            #expect(echo["path"] as? String == "/-/echo/s/hello")
            #expect(echo["query"] as? String == "x=1&y=%2F")
            #expect(echo["bodyLength"] as? Int == 5)
            #expect(echo["bodySHA256"] as? String == TestBody.text("hello").sha256)
            let authorization = try #require(echo["authorization"] as? [String: Any])
            let claims = try #require(authorization["claims"] as? [String: Any])
            #expect(claims["aud"] as? String == "api://s")
            let token = try #require(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://s/R"])))
            #expect(!response.bodyText.contains(token.value))
            #expect(!response.bodyText.contains(token.value.split(separator: ".")[2]))
        }
    }

    @Test("an unknown /-/ path is 404 problem+json, not routed")
    func unknownEndpoint() async throws {
        let routes = #"[ { "prefix": "/", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"] } ]"#
        try await ProxyHarness.with(routes: routes) { proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/-/nothing-here")
            #expect(response.status == .notFound)
            #expect(try response.jsonObject()["type"] as? String == "urn:bearer-proxy:problem:no-such-endpoint")
        }
    }
}
