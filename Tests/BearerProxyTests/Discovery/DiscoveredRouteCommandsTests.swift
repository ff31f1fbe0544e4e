import Foundation
import Synchronization
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

/// What `status`, `/-/status`, `token ROUTE` and `logout ROUTE` see of a discovered route (#25 item 8), through
/// the account runtime the commands use: its state, server, client and expiry — never a secret.
@Suite struct DiscoveredRouteCommandsTests {
    @Test("status: needs sign-in before login, then signed in with server, client and expiry, and no secret")
    func status() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await SignInHarness.with(
                account: #"{ "flow": "dev" }"#, routes: server.routes(prefix: "/mcp"), state: scratch.state
            ) { runtime in
                let before = StatusReport(account: runtime)
                #expect(before.routes.first?.discovered?.state == .needsSignIn)
                #expect(before.text.contains("needs-sign-in (run bearer-proxy login /mcp)"))
                _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
                let after = StatusReport(account: runtime)
                let state = try #require(after.routes.first?.discovered)
                #expect(state.state == .signedIn && state.authorizationServer == server.baseURL)
                #expect(state.clientKind == "dynamic" && state.clientID == "client-1" && state.expiresOn != nil)
                let stored = try #require(
                    try DiscoveredSignInStore(directory: scratch.state).signIn(
                        DiscoveredSignInKey(issuer: server.baseURL, clientID: "client-1", resource: server.resource)))
                let json = String(decoding: after.json, as: UTF8.self)
                #expect(json.contains("\"signed-in\"") && json.contains(server.baseURL))
                for secret in [stored.refreshToken!, stored.accessToken!] {
                    #expect(!json.contains(secret) && !after.text.contains(secret))
                }
            }
        }
    }

    @Test("/-/status shows the discovered route's state")
    func adminStatus() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            try await ProxyHarness.with(routes: server.routes(prefix: "/mcp"), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/-/status")
                let routes = try #require(try response.jsonObject()["routes"] as? [[String: Any]])
                let discovered = try #require(routes.first?["discovered"] as? [String: Any])
                #expect(discovered["state"] as? String == "signed-in")
                #expect(discovered["authorizationServer"] as? String == server.baseURL)
            }
        }
    }

    @Test(
        "token ROUTE gives the route's own token; logout ROUTE revokes and forgets it, --forget-registration the client too"
    )
    func tokenAndLogout() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let store = DiscoveredSignInStore(directory: scratch.state)
            try await SignInHarness.with(
                account: #"{ "flow": "dev" }"#, routes: server.routes(prefix: "/mcp"), state: scratch.state
            ) { runtime in
                let route = try #require(runtime.configuration.routes.routes.first)
                let tokens = try #require(runtime.discoveredTokens(for: route))
                let token = try await tokens.accessToken(for: RouteAuth.discoveredTokenKey)
                let key = try #require(try store.routeKey(upstream: server.resource))
                #expect(token.value == (try store.signIn(key))?.accessToken)
                let refreshToken = try #require(try store.signIn(key)?.refreshToken)
                let signedOut = try #require(try await runtime.forgetDiscovered(route, registration: false))
                #expect(signedOut.issuer == server.baseURL && signedOut.revocation.contains("was revoked"))
                #expect(server.revoked == [refreshToken])
                #expect(try store.routeKey(upstream: server.resource) == nil && (try store.signIn(key)) == nil)
                #expect(try store.registration(issuer: server.baseURL) != nil)
                #expect(StatusReport(account: runtime).routes.first?.discovered?.state == .needsSignIn)
                _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
                #expect(try await runtime.forgetDiscovered(route, registration: true)?.issuer == server.baseURL)
                #expect(try store.registration(issuer: server.baseURL) == nil)
                #expect(try await runtime.forgetDiscovered(route, registration: true) == nil)
            }
        }
    }

    @Test(
        "logout ROUTE signs out locally first: when the revocation reaches the server, the state directory holds nothing"
    )
    func localSignOutBeforeRevocation() async throws {
        let seen = Mutex<[Bool]>([])
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let store = DiscoveredSignInStore(directory: scratch.state)
            let key = try #require(try store.routeKey(upstream: server.resource))
            server.update { settings in
                settings.onRevocation = {
                    let stillStored =
                        (try? store.signIn(key)) != nil || (try? store.routeKey(upstream: server.resource)) != nil
                    seen.withLock { $0.append(stillStored) }
                }
            }
            try await SignInHarness.with(
                account: #"{ "flow": "dev" }"#, routes: server.routes(prefix: "/mcp"), state: scratch.state
            ) { runtime in
                let route = try #require(runtime.configuration.routes.routes.first)
                let signedOut = try #require(try await runtime.forgetDiscovered(route, registration: false))
                #expect(signedOut.revocation.contains("was revoked"), "\(signedOut.revocation)")
            }
            // One revocation arrived, and by then neither the sign-in nor the route's index named it.
            #expect(seen.withLock { $0 } == [false])
        }
    }
}
