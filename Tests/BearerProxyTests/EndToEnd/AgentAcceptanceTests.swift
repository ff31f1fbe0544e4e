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

/// #25's "done when", on real processes and sockets: an agent with no OAuth at all (`curl`, several processes at
/// once) reaches two MCP-style servers with separate authorization servers through one `serve`, after one `login`
/// each — and before that gets a clear answer naming the command, never the upstream's challenge.
@Suite("Processes: agents with no OAuth reach two MCP servers through one serve")
struct AgentAcceptanceTests {
    /// What one `curl` process got: the status and the body.
    struct Reply: Sendable {
        var status: Int
        var body: String

        func json() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        }
    }

    /// An MCP client's JSON-RPC `POST` to the proxy by a `curl` process: no `Authorization`, no OAuth.
    static func agentPost(port: Int, path: String) async throws -> Reply {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        let result = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", "30", "-X", "POST", "-H", "content-type: application/json", "--data", body,
                "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return Reply(status: Int(lines.last ?? "") ?? 0, body: lines.dropLast().joined(separator: "\n"))
    }

    /// `count` agents at once, alternately on `/a/mcp` and `/b/mcp`: their replies, by path.
    static func agents(_ count: Int, port: Int) async throws -> [(path: String, reply: Reply)] {
        try await withThrowingTaskGroup(of: (String, Reply).self) { group in
            for index in 0..<count {
                let path = index.isMultiple(of: 2) ? "/a/mcp" : "/b/mcp"
                group.addTask { (path, try await agentPost(port: port, path: path)) }
            }
            var replies: [(path: String, reply: Reply)] = []
            for try await (path, reply) in group { replies.append((path, reply)) }
            return replies
        }
    }

    @Test("one login per server, then six agent processes at once: each server's own audience, one redemption each")
    func twoServersSeveralAgents() async throws {
        try await DiscoveredSignInTests.withServer { first, _ in
            let second = try await FakeAuthorizationServer.start()
            do {
                try await Self.run(first, second)
            } catch {
                await second.shutdown()
                throw error
            }
            await second.shutdown()
        }
    }

    static func run(_ first: FakeAuthorizationServer, _ second: FakeAuthorizationServer) async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/routes.json"
        let routes =
            #"[{ "prefix": "/a", "upstream": "\#(first.resource)", "auth": "discover" },"#
            + #" { "prefix": "/b", "upstream": "\#(second.resource)", "auth": "discover" }]"#
        try #"{"account": {"flow": "dev"}, "routes": \#(routes)}"#.write(
            toFile: config, atomically: true, encoding: .utf8)
        // `true` "opens" the browser: the test plays the person.
        let environment = ["XDG_STATE_HOME": directory + "/state", "BROWSER": "true"]
        let (_, output) = try await ChildProcess.withListening(
            ["serve", "--config", config, "--listen", "127.0.0.1:0"], environment: environment
        ) { port, running in
            #expect(try await CommandLineTests.waitUntilHealthy(port: port))
            // Before any login: a clear 401 naming the command, and nothing of the upstream's OAuth challenge.
            let before = try await agentPost(port: port, path: "/a/mcp")
            #expect(before.status == 401)
            #expect(before.body.contains("bearer-proxy login /a") && !before.body.contains("resource_metadata"))
            #expect(first.authorizeQueries.isEmpty && second.authorizeQueries.isEmpty)

            try await Self.login(["a", "b"], config: config, environment: environment)
            #expect(first.registrations == 1 && first.authorizeQueries.count == 1)
            #expect(second.registrations == 1 && second.authorizeQueries.count == 1)

            for round in 0..<2 {
                let forms = (first.tokenForms.count, second.tokenForms.count)
                for (path, reply) in try await agents(6, port: port) {
                    #expect(reply.status == 200, "round \(round) \(path): \(reply.body)")
                    let resource = path.hasPrefix("/a") ? first.resource : second.resource
                    // The upstream saw a token for itself alone (RFC 8707 audience), sent by the proxy.
                    #expect(try reply.json()["audience"] as? String == resource)
                }
                if round == 1 {
                    // The tokens were revoked: each route redeemed its rotating refresh token once, for all agents.
                    #expect(first.tokenForms.count == forms.0 + 1 && second.tokenForms.count == forms.1 + 1)
                    #expect(first.tokenForms.last?["grant_type"] == "refresh_token")
                }
                first.revokeAccessTokens()
                second.revokeAccessTokens()
            }
            // Still one registration and one browser sign-in per server.
            #expect(first.registrations == 1 && first.authorizeQueries.count == 1)
            #expect(second.registrations == 1 && second.authorizeQueries.count == 1)
            running.signal(SIGTERM)
        }
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Runs `bearer-proxy login ROUTE` for each route at once, playing the person in the browser for each.
    static func login(_ routes: [String], config: String, environment: [String: String]) async throws {
        let lines = CapturingLogHandler.Store()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for route in routes {
                group.addTask {
                    let output = try await WatchedChild.run(
                        ["login", route, "--config", config], environment: environment
                    ) { line in lines.append(route + ": " + line) }
                    #expect(output.status == .exited(0), "\(output.stderr)")
                }
                group.addTask {
                    let prefix = route + ":   http"
                    try await withTimeout(waitingFor: "the sign-in URL of login \(route)") {
                        while !lines.all.contains(where: { $0.hasPrefix(prefix) }) {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                    }
                    let line = try #require(lines.all.first { $0.hasPrefix(prefix) })
                    _ = try await TestBrowser.open(String(line.dropFirst(prefix.count - "http".count)))
                }
            }
            try await group.waitForAll()
        }
    }
}
