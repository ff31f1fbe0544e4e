import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// A command that changes a discovered route's sign-in — `logout ROUTE`, `logout ROUTE --forget-registration`, a
/// `login ROUTE` that replaces the sign-in — reaches a `serve` that is already running, on real processes and
/// sockets: once the command has returned, the token it replaced is sent no more (docs/tokens.md: within a second).
@Suite("Processes: a command's change of a discovered route's sign-in reaches a running serve")
struct DiscoveredSignInFollowTests {
    /// How long after a command returns a running `serve` may still send the token it replaced: the documented
    /// second, with room for a 2-core machine busy with the whole suite and its children (5 s was once too little).
    /// Without a `serve` that follows the state directory, the old token is sent until it expires (an hour here).
    static let reach: Duration = .seconds(20)

    /// Sends requests through `serve` on `port` until one satisfies `done`, failing after ``reach``.
    static func poll(
        _ port: Int, until what: String, _ done: @escaping @Sendable (TestResponse) -> Bool
    ) async throws -> TestResponse {
        try await withTimeout(reach, waitingFor: what) {
            while true {
                let response = try await TestClient.send(port: port, uri: "/mcp/poll")
                if done(response) { return response }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test(
        "logout ROUTE while serve runs: serve stops sending the route's token and answers 401 naming login ROUTE",
        arguments: [["logout", "mcp"], ["logout", "mcp", "--forget-registration"]])
    func logoutReachesServe(_ command: [String]) async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                // Two running serves, both sending the sign-in's token: the command reaches each of them.
                try await DiscoveredProcessesTests.withServe(files) { port in
                    try await DiscoveredProcessesTests.withServe(files) { other in
                        for serve in [port, other] {
                            #expect(try await TestClient.send(port: serve, uri: "/mcp/x").status == .ok)
                        }
                        let old = try #require(server.bearers.last)

                        let logout = try await files.run(command)
                        #expect(logout.status == 0, "\(logout.stderr)")
                        // The upstream still accepts the old access token (revocation is of the refresh token):
                        // only the proxy can stop sending it.
                        for serve in [port, other] {
                            let refused = try await Self.poll(
                                serve, until: "serve to stop sending the signed-out token"
                            ) {
                                $0.status == .unauthorized
                            }
                            #expect(refused.bodyText.contains("bearer-proxy login /mcp"), "\(refused.bodyText)")
                        }
                        let seen = server.bearers.count
                        for serve in [port, other] {
                            #expect(try await TestClient.send(port: serve, uri: "/mcp/y").status == .unauthorized)
                        }
                        #expect(!server.bearers.dropFirst(seen).contains(old))
                    }
                }
            }
        }
    }

    @Test("login ROUTE that replaces the sign-in while serve runs: serve sends the new sign-in's token, not the old")
    func loginReachesServe() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                try await DiscoveredProcessesTests.withServe(files) { port in
                    #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)
                    let old = try #require(server.bearers.last)

                    let login = try await files.run(["login", "mcp"])
                    #expect(login.status == 0, "\(login.stderr)")
                    let key = try #require(try files.store.routeKey(upstream: server.resource))
                    let new = try #require(try files.store.signIn(key)?.accessToken)
                    #expect(new != old)
                    _ = try await Self.poll(port, until: "serve to send the new sign-in's token") { _ in
                        server.bearers.last == new
                    }
                    let seen = server.bearers.count
                    #expect(try await TestClient.send(port: port, uri: "/mcp/y").status == .ok)
                    #expect(!server.bearers.dropFirst(seen).contains(old))
                }
            }
        }
    }
}
