import Foundation
import Subprocess
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

/// Two `login ROUTE` processes and a `serve` on one machine (#25 item 6), on real processes and sockets: one
/// browser tab, one registration, the second login takes the first's sign-in, the proxy's request waits for it,
/// and the proxy's refresh afterwards is one redemption.
@Suite("Processes: two logins and a serve for one discovered route")
struct DiscoveredLoginProcessTests {
    @Test("two login processes and a serve: one tab, one registration, the request waits, one refresh")
    func twoLoginsAndServe() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/routes.json"
            let routes = server.routes(prefix: "/mcp")
            try #"{"account": {"flow": "dev"}, "routes": \#(routes)}"#.write(
                toFile: config, atomically: true, encoding: .utf8)
            // `true` "opens" the browser: the test plays the person, at the moment it chooses.
            let environment = ["XDG_STATE_HOME": directory + "/state", "BROWSER": "true"]
            let state = StateDirectory.standard(environment: environment)
            // Both children's stderr, line by line as written, each tagged with its child.
            let lines = CapturingLogHandler.Store()
            func waitForLine(_ what: String, _ found: @escaping @Sendable (String) -> Bool) async throws {
                try await withTimeout(waitingFor: what) {
                    while !lines.all.contains(where: found) { try await Task.sleep(for: .milliseconds(5)) }
                }
            }
            let log = CapturingLogHandler.Store()
            try await ProxyHarness.with(
                routes: routes, stateDirectory: state, logger: CapturingLogHandler.logger(into: log)
            ) { proxy in
                async let first = WatchedChild.run(["login", "mcp", "--config", config], environment: environment) {
                    line in lines.append("first: " + line)
                }
                try await waitForLine("the first login's sign-in URL") { $0.hasPrefix("first:   http") }
                let url = try #require(lines.all.first { $0.hasPrefix("first:   http") }?.dropFirst("first:   ".count))
                async let second = WatchedChild.run(["login", "mcp", "--config", config], environment: environment) {
                    line in lines.append("second: " + line)
                }
                try await waitForLine("the second login to wait for the first") {
                    $0.hasPrefix("second: ") && $0.contains("waiting for it instead of opening a second browser tab")
                }
                async let request = TestClient.send(port: proxy.port, uri: "/mcp/x")
                try await withTimeout(waitingFor: "the proxy's request to wait for the login") {
                    while !log.all.contains(where: { $0.contains("waiting for the sign-in in progress") }) {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                _ = try await TestBrowser.open(String(url))
                let (a, b) = try await (first, second)
                #expect(a.status == .exited(0), "\(a.stderr)")
                #expect(b.status == .exited(0), "\(b.stderr)")
                #expect(b.stderr.contains("Signed in by the other sign-in"), "\(b.stderr)")
                #expect(!b.stderr.contains("  http"), "the second login showed a sign-in URL of its own")
                let response = try await request
                #expect(response.status == .ok)
                #expect(try response.jsonObject()["audience"] as? String == server.resource)
                #expect(server.registrations == 1 && server.authorizeQueries.count == 1)
                // The proxy's refresh after the logins: one redemption of the stored refresh token.
                let forms = server.tokenForms.count
                server.revokeAccessTokens()
                #expect(try await TestClient.send(port: proxy.port, uri: "/mcp/x").status == .ok)
                #expect(server.tokenForms.count == forms + 1)
                #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
            }
        }
    }
}
