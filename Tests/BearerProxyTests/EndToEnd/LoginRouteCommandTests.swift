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

/// `login ROUTE`, `token ROUTE`, `status` and `logout ROUTE` run as a user runs them (#25), against the fake
/// authorization server, with `curl` as the browser.
@Suite("Command line: login ROUTE")
struct LoginRouteCommandTests {
    @Test("login ROUTE signs in, token ROUTE prints the route's token, status shows it, logout ROUTE forgets it")
    func loginTokenStatusLogout() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/routes.json"
            let json =
                #"{"account": {"flow": "dev"}, "routes": [{"prefix": "/mcp", "upstream": "\#(server.resource)", "#
                + #""auth": "discover"}, {"prefix": "/api", "upstream": "https://api.example.com", "#
                + #""scopes": ["api://a/R"]}]}"#
            try json.write(toFile: config, atomically: true, encoding: .utf8)
            let environment = [
                "XDG_STATE_HOME": directory + "/state", "BROWSER": "curl --silent --location --output /dev/null",
            ]
            let login = try await CommandLineTests.run(["login", "mcp", "--config", config], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains("Signed in for /mcp at \(server.baseURL)"))
            #expect(!login.stdout.contains("rt-") && !login.stderr.contains("rt-"))

            let token = try await CommandLineTests.run(["token", "mcp", "--config", config], environment: environment)
            #expect(token.status == 0, "\(token.stderr)")
            #expect(token.stdout.hasPrefix("at-"))

            let status = try await CommandLineTests.run(["status", "--config", config], environment: environment)
            #expect(status.stdout.contains("discovered: signed-in at \(server.baseURL)"), "\(status.stdout)")

            let logout = try await CommandLineTests.run(
                ["logout", "mcp", "--forget-registration", "--config", config], environment: environment)
            #expect(logout.status == 0 && logout.stdout.contains("Signed out of /mcp"), "\(logout.stderr)")
            let after = try await CommandLineTests.run(["token", "mcp", "--config", config], environment: environment)
            #expect(after.status == 1 && after.stderr.contains("bearer-proxy login /mcp"), "\(after.stderr)")
        }
    }

    @Test("login ROUTE --scopes signs in for those scopes; --scopes without a route is a usage error")
    func loginWithScopes() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
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
            let login = try await CommandLineTests.run(
                ["login", "mcp", "--scopes", "mcp:read mcp:write", "--config", config], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains("scopes: mcp:read mcp:write"), "\(login.stdout)")
            #expect(server.authorizeQueries.last?["scope"] == "mcp:read mcp:write")
            let account = try await CommandLineTests.run(
                ["login", "--scopes", "x", "--config", config], environment: environment)
            #expect(account.status == 2 && account.stderr.contains("--scopes is for login ROUTE"), "\(account.stderr)")
        }
    }

    @Test("login with a route that is not discovered is a usage error")
    func notDiscovered() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/routes.json"
            let json =
                #"{"account": {"flow": "dev"}, "routes": [{"prefix": "/api", "upstream": "\#(server.resource)", "#
                + #""scopes": ["api://a/R"]}]}"#
            try json.write(toFile: config, atomically: true, encoding: .utf8)
            let result = try await CommandLineTests.run(
                ["login", "/api", "--config", config], environment: ["XDG_STATE_HOME": directory + "/state"])
            #expect(result.status == 2 && result.stderr.contains("not a discovered route"))
        }
    }
}
