import Foundation
import Testing

/// `login ROUTE` through the real binary, `curl` as the browser, when the authorization server has forgotten the
/// registration stored on this machine: with pushed authorization requests (RFC 9126) it registers again before
/// the browser is opened; without them, the waiting line says what to do when the browser shows a client error.
@Suite("Command line: login ROUTE with a forgotten registration")
struct LoginRoutePushedRequestTests {
    /// Runs `body` with a configuration naming `server`'s resource as `/mcp` and the environment to run it with.
    static func withConfiguration(
        _ server: FakeAuthorizationServer, _ body: (String, [String: String]) async throws -> Void
    ) async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/routes.json"
        let json =
            #"{"account": {"flow": "dev"}, "routes": [{"prefix": "/mcp", "upstream": "\#(server.resource)", "#
            + #""auth": "discover"}]}"#
        try json.write(toFile: config, atomically: true, encoding: .utf8)
        let environment = [
            "XDG_STATE_HOME": directory + "/state", "BROWSER": "curl --silent --location --output /dev/null",
        ]
        try await body(config, environment)
    }

    @Test("with pushed requests, login ROUTE registers again before the browser: it never sees the forgotten client")
    func pushedRequestRegistersAgain() async throws {
        try await DiscoveredSignInTests.withServer(PushedAuthorizationRequestTests.pushing) { server, _ in
            try await Self.withConfiguration(server) { config, environment in
                let first = try await CommandLineTests.run(
                    ["login", "mcp", "--config", config], environment: environment)
                #expect(first.status == 0, "\(first.stderr)")
                let forgotten = try #require(server.authorizeQueries.first?["client_id"])
                server.forgetClients()

                let again = try await CommandLineTests.run(
                    ["login", "mcp", "--config", config], environment: environment)
                #expect(again.status == 0, "\(again.stderr)")
                #expect(again.stderr.contains("registering again"), "\(again.stderr)")
                #expect(!again.stderr.contains("--forget-registration"), "\(again.stderr)")
                #expect(server.registrations == 2 && server.pushed.unknownClients == [forgotten])
                let clients = server.authorizeQueries.map { $0["client_id"] ?? "" }
                #expect(clients.count == 2 && clients[1] != forgotten, "\(clients)")
            }
        }
    }

    @Test("without pushed requests, login ROUTE with a stored registration says what to do on a client error")
    func forgetRegistrationHint() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await Self.withConfiguration(server) { config, environment in
                let first = try await CommandLineTests.run(
                    ["login", "mcp", "--config", config], environment: environment)
                #expect(first.status == 0, "\(first.stderr)")
                #expect(!first.stderr.contains("--forget-registration"), "\(first.stderr)")

                let again = try await CommandLineTests.run(
                    ["login", "mcp", "--config", config], environment: environment)
                #expect(again.status == 0, "\(again.stderr)")
                #expect(
                    again.stderr.contains(
                        "run: bearer-proxy logout /mcp --forget-registration, then: bearer-proxy login /mcp"),
                    "\(again.stderr)")
            }
        }
    }
}
