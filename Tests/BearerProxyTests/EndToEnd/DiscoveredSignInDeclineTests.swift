import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTokens

/// `"signIn": "auto"` opens a sign-in once per authorization server per machine (#25 items 2 and 6): after one that
/// `serve` opened there was declined, no `serve` — this one for another route, another one sharing the state
/// directory, the next one started, one that waited on the server's lock meanwhile — opens another tab with that
/// server within the back-off; `login ROUTE` is never held back, and a sign-in that succeeds forgets the decline.
@Suite("End to end: a declined sign-in holds its authorization server back")
struct DiscoveredSignInDeclineTests {
    static let auto = #""signIn": "auto""#

    /// Two discovered routes at `server`: `/a` on its resource, `/b` on a path below it — the same resource metadata,
    /// so the same authorization server — each with its `discovery` members.
    static func routes(_ server: FakeAuthorizationServer, a: String = auto, b: String = auto) -> String {
        #"[{ "prefix": "/a", "upstream": "\#(server.resource)", "auth": "discover", "discovery": { \#(a) } },"#
            + #" { "prefix": "/b", "upstream": "\#(server.resource)/b", "auth": "discover", "discovery": { \#(b) } }]"#
    }

    /// A server whose consent page the person declines.
    static var declining: FakeAuthorizationServer.Settings {
        var fake = FakeAuthorizationServer.Settings()
        fake.authorizeOutcome = .deny
        return fake
    }

    /// Asks for `/a`, declines the tab serve opens for it, and waits until `/a` says so.
    static func declineOnA(_ proxy: RunningProxy, _ console: ScriptedConsole) async throws {
        #expect(try await TestClient.send(port: proxy.server.port, uri: "/a/x").status == .unauthorized)
        _ = try await TestBrowser.open(try await DiscoveredAutoSignInTests.openedURL(console))
        try await DiscoveredAutoSignInTests.waitForDecline(proxy, "/a")
    }

    static func detail(_ proxy: RunningProxy, _ uri: String) async throws -> String {
        let response = try await TestClient.send(port: proxy.server.port, uri: uri)
        #expect(response.status == .unauthorized)
        return try response.problemDetail()
    }

    static func declinedUntil(_ server: FakeAuthorizationServer, _ scratch: StoreScratchDirectory, at now: Date)
        throws -> Date?
    {
        try DiscoveredSignInStore(directory: scratch.state).declinedUntil(
            issuer: server.baseURL, now: now, longest: DiscoveredSignInStarter.backOff)
    }

    @Test("after /a's sign-in is declined, a request on /b at the same server opens no tab and names login /b")
    func declineHoldsTheServer() async throws {
        try await DiscoveredSignInTests.withServer(Self.declining) { server, scratch in
            let console = ScriptedConsole(browser: true)
            try await DiscoveredAutoSignInTests.with(server, scratch, console: console, routes: Self.routes(server)) {
                proxy in
                try await Self.declineOnA(proxy, console)
                let detail = try await Self.detail(proxy, "/b/x")
                #expect(detail.contains("bearer-proxy login /b"), "\(detail)")
                #expect(
                    detail.contains(
                        "the last sign-in serve opened with \(server.baseURL) was declined or not finished"),
                    "\(detail)")
                #expect(try await Self.detail(proxy, "/b/x").contains("opens none for"))
                #expect(console.opened.count == 1 && server.authorizeQueries.count == 1)
            }
        }
    }

    @Test("the decline outlives its serve: the next one opens no tab; login ROUTE is not held back and clears it")
    func declineOutlivesTheProcess() async throws {
        try await DiscoveredSignInTests.withServer(Self.declining) { server, scratch in
            let first = ScriptedConsole(browser: true)
            try await DiscoveredAutoSignInTests.with(server, scratch, console: first, routes: Self.routes(server)) {
                proxy in try await Self.declineOnA(proxy, first)
            }
            #expect(try Self.declinedUntil(server, scratch, at: Date()) != nil)
            let second = ScriptedConsole(browser: true)
            try await DiscoveredAutoSignInTests.with(server, scratch, console: second, routes: Self.routes(server)) {
                proxy in
                let detail = try await Self.detail(proxy, "/a/x")
                #expect(detail.contains("declined or not finished"), "\(detail)")
                #expect(detail.contains("bearer-proxy login /a"), "\(detail)")
                #expect(second.opened.isEmpty && server.authorizeQueries.count == 1)
                // The person at the terminal signs in (for the same upstream as /a): not held back, and it clears.
                server.update { $0.authorizeOutcome = .approve }
                _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
                #expect(server.authorizeQueries.count == 2)
                #expect(try Self.declinedUntil(server, scratch, at: Date()) == nil)
                // Nothing holds /b back now (it was never asked for here): serve opens its tab.
                #expect(try await Self.detail(proxy, "/b/x").contains("serve is opening the sign-in"))
                _ = try await DiscoveredAutoSignInTests.openedURL(second)
            }
        }
    }

    @Test("a serve waiting on the server's lock while another's tab is open opens none once that one is declined")
    func waitingServeOpensNoTab() async throws {
        try await DiscoveredSignInTests.withServer(Self.declining) { server, scratch in
            let first = ScriptedConsole(browser: true)
            let second = ScriptedConsole(browser: true)
            let routes = Self.routes(server)
            try await DiscoveredAutoSignInTests.with(server, scratch, console: first, routes: routes) { one in
                try await DiscoveredAutoSignInTests.with(server, scratch, console: second, routes: routes) { two in
                    _ = try await Self.detail(one, "/a/x")
                    // The first serve's tab is open: it holds the server's lock until the sign-in ends.
                    let url = try await DiscoveredAutoSignInTests.openedURL(first)
                    _ = try await Self.detail(two, "/b/x")
                    try await waitUntil("the second serve to wait for the first one's sign-in") {
                        second.lines.contains { $0.contains("instead of opening a second browser tab") }
                    }
                    _ = try await TestBrowser.open(url)
                    let detail = try await DiscoveredAutoSignInTests.waitForDecline(two, "/b")
                    #expect(detail.contains("bearer-proxy login /b") && detail.contains(server.baseURL), "\(detail)")
                    #expect(second.opened.isEmpty && server.authorizeQueries.count == 1)
                }
            }
        }
    }

    @Test(
        "within the back-off no tab opens with the server; once it has passed (injected clock) one does, and clears it")
    func backOffEnds() async throws {
        try await DiscoveredSignInTests.withServer(Self.declining) { server, scratch in
            let clock = TestClock()
            let console = ScriptedConsole(browser: true)
            try await DiscoveredAutoSignInTests.with(
                server, scratch, console: console, routes: Self.routes(server), now: { clock.now }
            ) { proxy in
                try await Self.declineOnA(proxy, console)
                clock.advance(DiscoveredSignInStarter.backOff - 1)
                #expect(try await Self.detail(proxy, "/b/x").contains("opens none for 1 s"))
                clock.advance(2)
                server.update { $0.authorizeOutcome = .approve }
                #expect(try await Self.detail(proxy, "/b/x").contains("serve is opening the sign-in"))
                _ = try await TestBrowser.open(try await DiscoveredAutoSignInTests.openedURL(console))
                // Waits for the sign-in in progress (it holds the route's lock until it has stored its tokens).
                let signedIn = try await TestClient.send(port: proxy.server.port, uri: "/b/x")
                #expect(signedIn.status == .ok, "\(signedIn.bodyText)")
                #expect(console.opened.count == 2)
                #expect(try Self.declinedUntil(server, scratch, at: clock.now - DiscoveredSignInStarter.backOff) == nil)
            }
        }
    }

    @Test("a route with \"signIn\": \"login\" beside an auto one at the same server opens no tab; the auto one does")
    func loginRouteOpensNoTab() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            let console = ScriptedConsole(browser: true)
            let routes = Self.routes(server, b: #""signIn": "login""#)
            try await DiscoveredAutoSignInTests.with(server, scratch, console: console, routes: routes) { proxy in
                let login = try await Self.detail(proxy, "/b/x")
                #expect(login.contains("bearer-proxy login /b") && !login.contains("serve is"), "\(login)")
                #expect(try await Self.detail(proxy, "/a/x").contains("serve is opening the sign-in"))
                _ = try await DiscoveredAutoSignInTests.openedURL(console)
                let again = try await Self.detail(proxy, "/b/x")
                #expect(again.contains("bearer-proxy login /b") && !again.contains("serve is"), "\(again)")
                #expect(console.opened.count == 1)
                #expect(console.lines.contains { $0.hasPrefix("Sign in for /a ") })
                #expect(!console.lines.contains { $0.hasPrefix("Sign in for /b ") })
            }
        }
    }
}
