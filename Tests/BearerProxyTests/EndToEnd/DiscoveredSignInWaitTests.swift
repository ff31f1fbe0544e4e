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

/// `serve` and a `login ROUTE` in progress for the same route on one machine (#25 item 6): a request that finds no
/// sign-in waits for the one being made, under the lock the login holds, instead of answering 401 around it.
@Suite("End to end: serve waits for a login in progress")
struct DiscoveredSignInWaitTests {
    @Test("a request while login ROUTE has its browser tab open waits for that sign-in and then goes through")
    func requestWaitsForTheLogin() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            let log = CapturingLogHandler.Store()
            try await ProxyHarness.with(
                routes: server.routes(), stateDirectory: scratch.state, logger: CapturingLogHandler.logger(into: log)
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

    @Test("a shutdown ends a request's wait for a login in progress: answered 503 at once, the drain not held")
    func shutdownEndsTheWait() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            let log = CapturingLogHandler.Store()
            let configuration = try TestConfigurations.make(routes: server.routes(), account: #"{ "flow": "dev" }"#)
            let proxy = try await RunningProxy.start(
                configuration: configuration, stateDirectory: scratch.state, threads: 2,
                logger: CapturingLogHandler.logger(into: log))
            let route = DiscoveredSignInTests.route(server)
            let found = try await DiscoveredAuthorization.discover(
                for: route, settings: DiscoverySettings(), logger: ProxyHarness.silentLogger)
            let console = ScriptedConsole(browser: true)
            async let login = DiscoveredSignIn.run(
                route: route, settings: DiscoverySettings(), found: found, caFile: nil, stateDirectory: scratch.state,
                console: console, noBrowser: false, logger: ProxyHarness.silentLogger)
            // The login holds the route's sign-in lock until its tab comes back.
            let url = try #require(await console.nextOpenedURL())
            async let request = TestClient.send(port: proxy.server.port, uri: "/a/x")
            try await withTimeout(waitingFor: "the request to wait for the sign-in in progress") {
                while !log.all.contains(where: { $0.contains("waiting for the sign-in in progress") }) {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            let started = ContinuousClock.now
            try await proxy.shutdownWithinLimit()
            let response = try await request
            // Without the notice the wait lasts 40 s (RedemptionLock.maximumWait), holding the drain. The bound sits
            // well below that and far above a loaded machine's shutdown (13 s seen in CI with two builds running):
            // it tells the two apart without timing the proxy.
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(response.status == .serviceUnavailable)
            #expect((try response.jsonObject()["detail"] as? String)?.contains("the proxy is shutting down") == true)
            _ = try await TestBrowser.open(url)
            _ = try await login
            console.close()
        }
    }
}
