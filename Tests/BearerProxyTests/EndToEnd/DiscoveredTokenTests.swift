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

/// Discovered routes with a stored sign-in (#25): after `login ROUTE` a request through the proxy reaches the
/// protected resource with the token of its own authorization server — bound to its resource — while another
/// discovered route gets its own and a bearer route still gets the account's; the refresh token rotates, and a
/// refused one brings back the 401 naming the command.
@Suite("End to end: discovered routes with a sign-in")
struct DiscoveredTokenTests {
    static func routes(_ first: FakeAuthorizationServer, _ second: FakeAuthorizationServer, echo: FakeUpstream)
        -> String
    {
        #"[{ "prefix": "/a", "upstream": "\#(first.resource)", "auth": "discover" },"#
            + #" { "prefix": "/b", "upstream": "\#(second.resource)", "auth": "discover" },"#
            + #" { "prefix": "/api", "upstream": "\#(echo.baseURL)", "scopes": ["api://api/Read"] }]"#
    }

    @Test("login then requests: each discovered route gets its own audience, the bearer route the account's token")
    func audienceIsolation() async throws {
        try await DiscoveredSignInTests.withServer { first, scratch in
            let second = try await FakeAuthorizationServer.start()
            do {
                _ = try await DiscoveredSignInTests.signIn(first, state: scratch.state).get()
                _ = try await DiscoveredSignInTests.signIn(second, state: scratch.state).get()
                try await withUpstream({ _ in .echo }) { echo in
                    try await ProxyHarness.with(
                        routes: Self.routes(first, second, echo: echo), stateDirectory: scratch.state
                    ) { proxy in
                        let a = try await TestClient.send(port: proxy.port, uri: "/a/tools")
                        #expect(a.status == .ok)
                        #expect(try a.jsonObject()["audience"] as? String == first.resource)
                        #expect(try a.jsonObject()["path"] as? String == "/mcp/tools")
                        let b = try await TestClient.send(port: proxy.port, uri: "/b/tools")
                        #expect(b.status == .ok)
                        #expect(try b.jsonObject()["audience"] as? String == second.resource)
                        // The bearer route: the dev account's JWT, not a discovered token.
                        let api = try await TestClient.send(port: proxy.port, uri: "/api/x")
                        let payload = try api.echo()
                        let claims = try jwtClaims(payload.header("authorization"))
                        #expect(claims["aud"] as? String == "api://api")
                    }
                }
            } catch {
                await second.shutdown()
                throw error
            }
            await second.shutdown()
        }
    }

    @Test("an expired token is refreshed with the route's resource and the rotated refresh token is stored")
    func refreshRotates() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            let before = try #require(try store.signIn(key))
            try store.expireAccessToken(key)
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
            }
            let refresh = try #require(server.tokenForms.last)
            #expect(refresh["grant_type"] == "refresh_token" && refresh["resource"] == server.resource)
            #expect(refresh["refresh_token"] == before.refreshToken && refresh["scope"] == nil)
            let after = try #require(try store.signIn(key))
            #expect(after.refreshToken != before.refreshToken && after.refreshToken?.hasPrefix("rt-") == true)
        }
    }

    @Test("a refused refresh token (invalid_grant) brings back 401 naming `bearer-proxy login ROUTE`")
    func refusedRefresh() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            try store.updateSignIn(key) {
                $0?.expiresOn = Date(timeIntervalSinceNow: -60)
                $0?.refreshToken = "rt-revoked"
            }
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .unauthorized)
                #expect((try response.jsonObject()["detail"] as? String)?.contains("bearer-proxy login /a") == true)
            }
            #expect(try store.signIn(key)?.refreshToken == nil)
        }
    }

    @Test("with a state directory but no sign-in, a discovered route still answers 401 at once")
    func noSignIn() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .unauthorized)
                #expect((try response.jsonObject()["detail"] as? String)?.contains("bearer-proxy login /a") == true)
            }
            #expect(server.tokenForms.isEmpty)
        }
    }

    @Test("a login ROUTE made while the proxy runs is used by the very next request: no back-off after the 401")
    func signInWhileServing() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let before = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(before.status == .unauthorized)
                _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
                let after = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(after.status == .ok)
                #expect(try after.jsonObject()["audience"] as? String == server.resource)
            }
        }
    }

    @Test("invalid_client on a refresh drops the route's registration and its tokens: 401 naming the command")
    func staleRegistrationOnRefresh() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            try store.expireAccessToken(key)
            server.forgetClients()
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .unauthorized)
                #expect((try response.jsonObject()["detail"] as? String)?.contains("bearer-proxy login /a") == true)
            }
            #expect(try store.registration(issuer: server.baseURL) == nil)
            #expect(try store.signIn(key)?.refreshToken == nil)
        }
    }

    @Test("two proxies sharing the state directory redeem the rotating refresh token once")
    func oneRedemptionPerMachine() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            try store.expireAccessToken(key)
            let formsBefore = server.tokenForms.count
            let routes = server.routes()
            try await ProxyHarness.with(routes: routes, stateDirectory: scratch.state) { first in
                try await ProxyHarness.with(routes: routes, stateDirectory: scratch.state) { second in
                    async let one = TestClient.send(port: first.port, uri: "/a/x")
                    async let two = TestClient.send(port: second.port, uri: "/a/x")
                    let (a, b) = try await (one, two)
                    #expect(a.status == .ok && b.status == .ok)
                }
            }
            // Without the lock both would redeem the same refresh token, and the second would be refused.
            #expect(server.tokenForms.count == formsBefore + 1)
        }
    }

    @Test("a token the resource refuses (invalid_token) is replaced by a refresh, not taken over again from the file")
    func refusedTokenIsRefreshed() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                server.revokeAccessTokens()
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
            }
            #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
        }
    }
}
