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

/// The states `status` and `/-/status` show of a discovered route (#25 item 8) besides "needs sign-in" and "signed
/// in" (``DiscoveredRouteCommandsTests/status()``): "needs step-up" after the upstream's last answer was a `403`
/// `insufficient_scope`, with the scopes to sign in for and never a token, and "error" when the state directory
/// cannot be read.
@Suite("End to end: a discovered route's state in status")
struct DiscoveredStatusTests {
    /// The discovered part of `/-/status`'s only route.
    static func adminState(_ proxy: ProxyHarness) async throws -> [String: Any] {
        let response = try await TestClient.send(port: proxy.port, uri: "/-/status")
        let routes = try #require(try response.jsonObject()["routes"] as? [[String: Any]])
        return try #require(routes.first?["discovered"] as? [String: Any])
    }

    @Test(
        "after a 403 insufficient_scope: needs step-up with the scopes, in /-/status and status; signed in again after login --scopes"
    )
    func needsStepUp() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.challengeScope = "mcp:read"
        fake.requiredScopes = ["mcp:read", "mcp:write"]
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                #expect(try await Self.adminState(proxy)["state"] as? String == "signed-in")
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .forbidden)
                let admin = try await Self.adminState(proxy)
                #expect(admin["state"] as? String == "needs-step-up")
                #expect(admin["stepUpScopes"] as? [String] == ["mcp:read", "mcp:write"])
                #expect(admin["scopes"] as? [String] == ["mcp:read"])
                // `bearer-proxy status` in another process reads the same from the state directory.
                try await SignInHarness.with(
                    account: #"{ "flow": "dev" }"#, routes: server.routes(), state: scratch.state
                ) { runtime in
                    let report = StatusReport(account: runtime)
                    #expect(report.routes.first?.discovered?.state == .needsStepUp)
                    #expect(
                        report.text.contains("needs-step-up")
                            && report.text.contains("bearer-proxy login /a --scopes 'mcp:read mcp:write'"),
                        "\(report.text)")
                    let json = String(decoding: report.json, as: UTF8.self)
                    for secret in server.issuedTokens {
                        #expect(!json.contains(secret) && !report.text.contains(secret))
                    }
                }
                _ = try await DiscoveredSignInTests.signIn(
                    server, state: scratch.state, scopes: ["mcp:read", "mcp:write"]
                ).get()
                #expect(try await Self.adminState(proxy)["state"] as? String == "signed-in")
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                #expect(try await Self.adminState(proxy)["state"] as? String == "signed-in")
            }
        }
    }

    @Test("needs step-up lasts only while it is the upstream's last answer: the next answer that is not one clears it")
    func laterAnswerClearsStepUp() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.requiredScopes = ["mcp:write"]
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .forbidden)
                #expect(try await Self.adminState(proxy)["state"] as? String == "needs-step-up")
                server.update { $0.requiredScopes = [] }
                #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                let admin = try await Self.adminState(proxy)
                #expect(admin["state"] as? String == "signed-in" && admin["stepUpScopes"] == nil)
            }
        }
    }

    @Test("a state directory that cannot be read: the route's state is error, with the reason")
    func unreadableState() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try scratch.state.prepare()
            // The route index is a directory: reading it fails, which no sign-in can fix.
            try FileManager.default.createDirectory(
                atPath: scratch.state.path + "/discovered-routes.json", withIntermediateDirectories: false)
            try await SignInHarness.with(
                account: #"{ "flow": "dev" }"#, routes: server.routes(), state: scratch.state
            ) { runtime in
                let report = StatusReport(account: runtime)
                let state = try #require(report.routes.first?.discovered)
                #expect(state.state == .error)
                #expect(state.detail?.contains("discovered-routes.json") == true, "\(state.detail ?? "")")
                #expect(report.text.contains("discovered: error ("))
                let document = try #require(try JSONSerialization.jsonObject(with: report.json) as? [String: Any])
                let routes = try #require(document["routes"] as? [[String: Any]])
                #expect((routes.first?["discovered"] as? [String: Any])?["state"] as? String == "error")
            }
        }
    }
}
