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

/// `"signIn": "auto"` (#25 item 2): `serve` opens a discovered route's browser sign-in itself when a request finds no
/// usable sign-in — the request answered `401` at once, saying so; one tab, however many requests; and after a
/// declined sign-in, no other tab for a while.
@Suite("End to end: serve opens the sign-in itself")
struct DiscoveredAutoSignInTests {
    /// A proxy serving `server`'s resource at `/a` with `"signIn": "auto"` (or `routes`), its sign-ins opened
    /// through `console` (whose opened URLs the test follows or not), the starter running beside it, on `now`.
    static func with(
        _ server: FakeAuthorizationServer, _ scratch: StoreScratchDirectory, console: ScriptedConsole,
        routes: String? = nil, now: (@Sendable () -> Date)? = nil, _ body: (RunningProxy) async throws -> Void
    ) async throws {
        let configuration = try TestConfigurations.make(
            routes: routes ?? server.routes(discovery: #""signIn": "auto""#), account: #"{ "flow": "dev" }"#)
        let proxy = try await RunningProxy.start(
            configuration: configuration, stateDirectory: scratch.state, threads: 2,
            logger: ProxyHarness.silentLogger, now: now, signInConsole: console)
        let starter = try #require(proxy.signInStarter)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await starter.run() }
                defer { group.cancelAll() }
                try await body(proxy)
            }
        } catch {
            console.close()
            try? await proxy.shutdownWithinLimit()
            throw error
        }
        console.close()
        try await proxy.shutdownWithinLimit()
    }

    /// The URL serve opened: a test fails, not hangs, when it opens none.
    static func openedURL(_ console: ScriptedConsole) async throws -> String {
        let url = try await withTimeout(waitingFor: "serve to open the sign-in") { await console.nextOpenedURL() }
        return try #require(url)
    }

    /// Asks for `prefix` until the answer says that the last sign-in was declined; that answer's detail.
    @discardableResult
    static func waitForDecline(_ proxy: RunningProxy, _ prefix: String) async throws -> String {
        let port = proxy.server.port
        return try await withTimeout(waitingFor: "the declined sign-in to be noted") {
            while true {
                let detail = try await TestClient.send(port: port, uri: prefix + "/x").problemDetail()
                if detail.contains("declined or not finished") { return detail }
            }
        }
    }

    @Test("the first request is answered 401 at once and serve opens one tab; once signed in, requests go through")
    func signInOpenedByServe() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            let console = ScriptedConsole(browser: true)
            try await Self.with(server, scratch, console: console) { proxy in
                let first = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
                #expect(first.status == .unauthorized)
                #expect(try first.problemDetail().contains("serve is opening the sign-in in the browser"))
                let url = try await Self.openedURL(console)
                _ = try await TestBrowser.open(url)
                // Waits for the sign-in in progress (it holds the route's lock until it has stored its tokens).
                let second = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
                #expect(second.status == .ok)
                #expect(try second.jsonObject()["audience"] as? String == server.resource)
                #expect(console.opened.count == 1 && server.authorizeQueries.count == 1)
                #expect(server.registrations == 1)
            }
        }
    }

    @Test("a declined sign-in: the next requests say so and name login ROUTE, and no second tab opens")
    func declinedBacksOff() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.authorizeOutcome = .deny
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let console = ScriptedConsole(browser: true)
            try await Self.with(server, scratch, console: console) { proxy in
                #expect(try await TestClient.send(port: proxy.server.port, uri: "/a/x").status == .unauthorized)
                let url = try await Self.openedURL(console)
                _ = try await TestBrowser.open(url)
                let detail = try await Self.waitForDecline(proxy, "/a")
                #expect(detail.contains("bearer-proxy login /a"), "\(detail)")
                let again = try await TestClient.send(port: proxy.server.port, uri: "/a/x")
                #expect(try again.problemDetail().contains("declined or not finished"))
                #expect(console.opened.count == 1 && server.authorizeQueries.count == 1)
            }
        }
    }

    @Test("configuration: signIn is login or auto, and not with the account's authorization server")
    func configuration() {
        let bad =
            #"{ "prefix": "/m", "upstream": "https://mcp.example.com/mcp", "auth": "discover", "#
            + #""discovery": { "signIn": "always" } }"#
        let problems = ConfigurationFixture.problems(ConfigurationFixture.account(#"{ "flow": "dev" }"#, routes: [bad]))
        #expect(problems.contains { $0.path == "routes[0].discovery.signIn" && $0.message.contains("\"auto\"") })
        let account =
            #"{ "prefix": "/m", "upstream": "https://mcp.example.com/mcp", "auth": "discover", "#
            + #""discovery": { "authorizationServer": "account", "signIn": "auto" } }"#
        let refresh =
            #"{ "flow": "refresh-token", "issuer": "https://id.example.com", "clientId": "c", "#
            + #""refreshTokenEnv": "RT" }"#
        let more = ConfigurationFixture.problems(
            ConfigurationFixture.account(refresh, routes: [account]), environment: ["RT": "x"])
        #expect(more.map(\.path) == ["routes[0].discovery.signIn"], "\(more)")
    }
}
