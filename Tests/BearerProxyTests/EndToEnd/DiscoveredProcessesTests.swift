import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn
@testable import BearerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// Several `bearer-proxy` processes on one machine for one discovered route (#25 item 6), on real processes and
/// sockets: two `serve`s refreshing one rotating refresh token at once, and a `login` killed while it holds the
/// sign-in lock.
@Suite("Processes: two serves refreshing, a login killed mid-sign-in")
struct DiscoveredProcessesTests {
    /// Runs `serve` on a port of its own with `files`' configuration and state, healthy before `body` runs, and
    /// stopped (SIGTERM) after it.
    static func withServe(
        _ files: DiscoveredRouteFiles, _ body: (_ port: Int) async throws -> Void
    ) async throws {
        let (_, output) = try await ChildProcess.withListening(
            ["serve", "--config", files.config, "--listen", "127.0.0.1:0"],
            environment: files.environment(browser: DiscoveredRouteFiles.idleBrowser)
        ) { port, serve in
            #expect(try await CommandLineTests.waitUntilHealthy(port: port))
            try await body(port)
            serve.signal(SIGTERM)
        }
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test("two serves whose token is refused at once: one refresh-token redemption, both requests answered")
    func twoServesRefreshOnce() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                _ = try await DiscoveredSignInTests.signIn(server, state: files.stateDirectory).get()
                try await Self.withServe(files) { first in
                    try await Self.withServe(files) { second in
                        // Each takes the stored access token.
                        for port in [first, second] {
                            #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)
                        }
                        #expect(server.tokenForms.map { $0["grant_type"] } == ["authorization_code"])

                        // The upstream now refuses it: both refresh, at once. The fake server refuses a refresh
                        // token redeemed before (rotation), so a second redemption would fail a request.
                        server.revokeAccessTokens()
                        async let a = TestClient.send(port: first, uri: "/mcp/a")
                        async let b = TestClient.send(port: second, uri: "/mcp/b")
                        let (answerA, answerB) = try await (a, b)
                        #expect(answerA.status == .ok, "\(answerA.bodyText)")
                        #expect(answerB.status == .ok, "\(answerB.bodyText)")
                        #expect(try answerA.jsonObject()["audience"] as? String == server.resource)
                        #expect(try answerB.jsonObject()["audience"] as? String == server.resource)
                        #expect(
                            server.tokenForms.map { $0["grant_type"] } == ["authorization_code", "refresh_token"])
                    }
                }
            }
        }
    }

    @Test("a login killed while it holds the sign-in lock: the waiting login goes on at once and signs in itself")
    func killedLoginReleasesTheLock() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let lines = CapturingLogHandler.Store()
                let terminal = try PseudoTerminal()
                // The first login shows its URL and waits for a person who never comes (BROWSER does nothing).
                let status = try await terminal.run(
                    CommandLineTests.binary, ["login", "mcp", "--config", files.config],
                    environment: files.environment(browser: DiscoveredRouteFiles.idleBrowser)
                ) { first in
                    try await terminal.waitFor("/authorize?")
                    async let second = WatchedChild.run(
                        ["login", "mcp", "--config", files.config],
                        environment: files.environment(browser: DiscoveredRouteFiles.approvingBrowser)
                    ) { lines.append($0) }
                    try await withTimeout(waitingFor: "the second login to wait for the first") {
                        while !lines.all.contains(where: { $0.contains("waiting for it instead of opening") }) {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                    }
                    first.signal(SIGKILL)
                    let output = try await second
                    #expect(output.status == .exited(0), "\(output.stderr)")
                    #expect(output.stdout.contains("Signed in for /mcp at \(server.baseURL)"), "\(output.stdout)")
                    #expect(!output.stderr.contains("Signed in by the other sign-in"), "\(output.stderr)")
                }
                #expect(status == 128 + SIGKILL)
                // One tab, the second login's: the first one's URL was never visited.
                #expect(server.authorizeQueries.count == 1)
                #expect(server.tokenForms.map { $0["grant_type"] } == ["authorization_code"])
                let key = try #require(try files.store.routeKey(upstream: server.resource))
                #expect(try files.store.signIn(key)?.refreshToken != nil)
            }
        }
    }
}
