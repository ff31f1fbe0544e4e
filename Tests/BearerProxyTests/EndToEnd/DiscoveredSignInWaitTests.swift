import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Foundation
import Testing

/// `serve` and a `login ROUTE` in progress for the same route on one machine (#25 item 6): a request that finds no
/// sign-in waits for the one being made, under the lock the login holds, instead of answering 401 around it.
@Suite("End to end: serve waits for a login in progress")
struct DiscoveredSignInWaitTests {
    @Test("a request while login ROUTE has its browser tab open waits for that sign-in and then goes through")
    func requestWaitsForTheLogin() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            let routes = #"[{ "prefix": "/a", "upstream": "\#(server.resource)", "auth": "discover" }]"#
            let log = CapturingLogHandler.Store()
            try await ProxyHarness.with(
                routes: routes, stateDirectory: scratch.state, logger: CapturingLogHandler.logger(into: log)
            ) { proxy in
                let route = DiscoveredSignInTests.route(server)
                let found = try await DiscoveredAuthorization.discover(
                    for: route, settings: DiscoverySettings(), logger: ProxyHarness.silentLogger)
                let console = ScriptedConsole(browser: true)
                async let login = DiscoveredSignIn.run(
                    route: route, settings: DiscoverySettings(), found: found, caFile: nil,
                    stateDirectory: scratch.state, console: console, noBrowser: false,
                    logger: ProxyHarness.silentLogger)
                // The tab is open: the login holds the route's sign-in lock until it has stored its sign-in.
                let url = try #require(await console.nextOpenedURL())
                async let request = TestClient.send(port: proxy.port, uri: "/a/x")
                try await withTimeout(waitingFor: "the request to wait for the sign-in in progress") {
                    while !log.all.contains(where: { $0.contains("waiting for the sign-in in progress") }) {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                _ = try await TestBrowser.open(url)
                _ = try await login
                console.close()
                let response = try await request
                #expect(response.status == .ok)
                #expect(try response.jsonObject()["audience"] as? String == server.resource)
            }
        }
    }
}
