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

/// `"stepUp": "auto"` (#25 item 5): on a discovered route's `403` `insufficient_scope`, `serve` opens the sign-in for
/// the granted and the asked scopes itself and sends the request again, once, with the wider token; whatever stops
/// that answers the step-up problem, and no second tab opens for the same route and path within the back-off.
@Suite("End to end: serve steps up itself")
struct DiscoveredAutoStepUpTests {
    /// A resource that asks for `mcp:write` besides the `mcp:read` the first sign-in (made here) was granted.
    static var settings: FakeAuthorizationServer.Settings {
        var fake = FakeAuthorizationServer.Settings()
        fake.challengeScope = "mcp:read"
        fake.requiredScopes = ["mcp:read", "mcp:write"]
        return fake
    }

    /// A proxy serving `server`'s resource at `/a` with `discovery` (JSON members), signed in for `mcp:read`, its
    /// sign-ins opened through `console` and followed by a test browser, the starter running beside it.
    static func with(
        _ fake: FakeAuthorizationServer.Settings = settings,
        discovery: String = #""signIn": "auto", "stepUp": "auto""#,
        _ body: (FakeAuthorizationServer, RunningProxy, ScriptedConsole) async throws -> Void
    ) async throws {
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let first = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            #expect(first.scopes == ["mcp:read"])
            let console = ScriptedConsole(browser: true)
            let configuration = try TestConfigurations.make(
                routes: server.routes(discovery: discovery), account: #"{ "flow": "dev" }"#)
            let proxy = try await RunningProxy.start(
                configuration: configuration, stateDirectory: scratch.state, threads: 2,
                logger: ProxyHarness.silentLogger, signInConsole: console)
            let starter = try #require(proxy.signInStarter)
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await starter.run() }
                    group.addTask { await DiscoveredSignInTests.browse(console) }
                    defer { group.cancelAll() }
                    try await body(server, proxy, console)
                    console.close()
                }
            } catch {
                console.close()
                try? await proxy.shutdownWithinLimit()
                throw error
            }
            try await proxy.shutdownWithinLimit()
        }
    }

    static func problem(_ response: TestResponse) throws -> (type: String, detail: String) {
        let object = try response.jsonObject()
        return (try #require(object["type"] as? String), try #require(object["detail"] as? String))
    }

    static func stepUps(_ proxy: RunningProxy, _ outcome: String) async throws -> Double? {
        try await OperationsTests.samples(port: proxy.server.port)[
            #"bearer_proxy_step_ups_total{outcome="\#(outcome)",route="/a"}"#]
    }

    @Test("one sign-in for the union of scopes, the request replayed once and answered with the wider token")
    func reauthorizedAndReplayed() async throws {
        try await Self.with { server, proxy, console in
            let response = try await TestClient.send(
                port: proxy.server.port, method: "POST", uri: "/a/x", body: .bytes(Array("kept".utf8)))
            #expect(response.status == .ok, "\(response.bodyText)")
            #expect(try response.jsonObject()["path"] as? String == "/mcp/x")
            #expect(console.opened.count == 1)
            #expect(server.authorizeQueries.count == 2)
            #expect(server.authorizeQueries.last?["scope"] == "mcp:read mcp:write")
            // The wider token is the route's now: the next request goes straight through, no other tab.
            #expect(try await TestClient.send(port: proxy.server.port, uri: "/a/y").status == .ok)
            #expect(console.opened.count == 1)
            #expect(try await Self.stepUps(proxy, "reauthorized") == 1)
            #expect(try await Self.stepUps(proxy, "answered") == nil)
        }
    }

    @Test("the replay answered 403 again: the step-up problem, after exactly one sign-in; none again on that path")
    func refusedAgain() async throws {
        var fake = Self.settings
        fake.withheldScopes = ["mcp:write"]
        try await Self.with(fake) { server, proxy, console in
            let response = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
            #expect(response.status == .forbidden)
            let (type, detail) = try Self.problem(response)
            #expect(type == "urn:bearer-proxy:problem:step-up-required")
            #expect(detail.contains("refused the token of its sign-in for them too"), "\(detail)")
            #expect(detail.contains("bearer-proxy login /a --scopes 'mcp:read mcp:write'"), "\(detail)")
            #expect(console.opened.count == 1 && server.authorizeQueries.count == 2)
            let again = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
            #expect(again.status == .forbidden)
            #expect(try Self.problem(again).detail.contains("opens none for"), "\(again.bodyText)")
            #expect(console.opened.count == 1 && server.authorizeQueries.count == 2)
        }
    }

    @Test("a declined sign-in: the step-up problem, and no second tab for the route within the back-off")
    func declined() async throws {
        try await Self.with { server, proxy, console in
            server.update { $0.authorizeOutcome = .deny }
            let response = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
            #expect(response.status == .forbidden)
            let (type, detail) = try Self.problem(response)
            #expect(type == "urn:bearer-proxy:problem:step-up-required")
            #expect(detail.contains("declined or not finished"), "\(detail)")
            #expect(detail.contains("--scopes 'mcp:read mcp:write'"), "\(detail)")
            for path in ["/a/x", "/a/y"] {
                let again = try await TestClient.send(port: proxy.server.port, uri: path)
                #expect(again.status == .forbidden)
                #expect(try Self.problem(again).detail.contains("opens none for"), "\(again.bodyText)")
            }
            #expect(console.opened.count == 1 && server.authorizeQueries.count == 2)
            #expect(try await Self.stepUps(proxy, "declined") == 3)
        }
    }

    @Test("a body larger than the kept copy: the step-up problem at once, no sign-in")
    func bodyTooLarge() async throws {
        try await Self.with { server, proxy, console in
            let body = [UInt8](repeating: 0x78, count: ExchangeStateMachine.replayLimit + 1)
            let response = try await TestClient.send(
                port: proxy.server.port, method: "POST", uri: "/a/x", body: .bytes(body))
            #expect(response.status == .forbidden)
            #expect(try Self.problem(response).detail.contains("cannot be sent again"), "\(response.bodyText)")
            #expect(console.opened.isEmpty && server.authorizeQueries.count == 1)
            #expect(try await Self.stepUps(proxy, "answered") == 1)
        }
    }

    @Test("without the opt-in (signIn auto alone): the problem as before, no tab")
    func optedOut() async throws {
        try await Self.with(discovery: #""signIn": "auto""#) { server, proxy, console in
            let response = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
            #expect(response.status == .forbidden)
            let detail = try Self.problem(response).detail
            #expect(!detail.contains("step-up did not get through"), "\(detail)")
            #expect(detail.contains("bearer-proxy login /a --scopes 'mcp:read mcp:write'"), "\(detail)")
            #expect(console.opened.isEmpty && server.authorizeQueries.count == 1)
        }
    }

    @Test("configuration: stepUp is answer or auto, needs signIn auto, and not with the account's server")
    func configuration() {
        func route(_ discovery: String, prefix: String = "/m") -> String {
            #"{ "prefix": "\#(prefix)", "upstream": "https://mcp.example.com/mcp", "auth": "discover", "#
                + #""discovery": { \#(discovery) } }"#
        }
        let bad = ConfigurationFixture.problems(
            ConfigurationFixture.account(
                #"{ "flow": "dev" }"#,
                routes: [route(#""stepUp": "always""#), route(#""stepUp": "auto""#, prefix: "/n")]))
        #expect(bad.contains { $0.path == "routes[0].discovery.stepUp" && $0.message.contains("\"answer\"") })
        #expect(bad.contains { $0.path == "routes[1].discovery.stepUp" && $0.message.contains("\"signIn\"") })
        let good = ConfigurationFixture.problems(
            ConfigurationFixture.account(
                #"{ "flow": "dev" }"#,
                routes: [route(#""signIn": "auto", "stepUp": "auto""#), route(#""stepUp": "answer""#, prefix: "/n")]))
        #expect(good.isEmpty, "\(good)")
        let refresh =
            #"{ "flow": "refresh-token", "issuer": "https://id.example.com", "clientId": "c", "#
            + #""refreshTokenEnv": "RT" }"#
        let account = ConfigurationFixture.problems(
            ConfigurationFixture.account(
                refresh, routes: [route(#""authorizationServer": "account", "stepUp": "auto""#)]),
            environment: ["RT": "x"])
        #expect(account.map(\.path) == ["routes[0].discovery.stepUp"], "\(account)")
    }
}
