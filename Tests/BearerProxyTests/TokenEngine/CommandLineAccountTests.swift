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

@Suite("Command line: login, token, status, logout")
struct CommandLineAccountTests {
    @Test("login stores the account; token prints only the token; status shows it; logout forgets it")
    func cycle() async throws {
        try await withIdentityProvider { provider in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/routes.json"
            let account = TestAccounts.refreshToken(provider)
            try Data(
                #"{ "account": \#(account), "routes": [ { "prefix": "/todo", "upstream": "https://api.example", "#
                    .appending(#""scopes": ["api://todo/Read"] } ] }"#).utf8
            ).write(to: URL(fileURLWithPath: file))
            var environment = TestAccounts.environment(provider)
            environment["XDG_STATE_HOME"] = directory + "/state"
            let refreshToken = environment[TestAccounts.refreshTokenVariable]!

            let login = try await CommandLineTests.run(["login", "--config", file], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout.contains(FakeIdentityProvider.User.alice.name))

            let token = try await CommandLineTests.run(["token", "todo", "--config", file], environment: environment)
            #expect(token.status == 0)
            let printed = token.stdout.trimmingCharacters(in: .newlines)
            #expect(!printed.contains("\n"))
            #expect(FakeIdentityProvider.claims(ofAccessToken: printed)?["aud"] as? String == "api://todo")
            // From the cache: the provider saw only login's request.
            #expect(provider.tokenRequestCount == 1)

            let status = try await CommandLineTests.run(["status", "--config", file], environment: environment)
            #expect(status.status == 0)
            #expect(status.stdout.contains("token: cached"))
            for secret in [refreshToken, printed] {
                let leaked = (status.stdout + status.stderr + login.stdout + login.stderr).contains(secret)
                #expect(!leaked, "a secret was printed")
            }

            let logout = try await CommandLineTests.run(["logout", "--config", file], environment: environment)
            #expect(logout.status == 0)
            let after = try await CommandLineTests.run(
                ["status", "--json", "--config", file], environment: environment)
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])
            let routes = try #require(report["routes"] as? [[String: Any]])
            #expect((routes.first?["token"] as? [String: Any])?["cached"] as? Bool == false)
        }
    }

    @Test("token for an unknown route exits 2 naming the routes; a sign-in failure exits 1 with the login hint")
    func tokenErrors() async throws {
        try await withIdentityProvider { provider in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/routes.json"
            try Data(
                #"{ "account": \#(TestAccounts.refreshToken(provider)), "routes": [ { "prefix": "/todo", "#
                    .appending(#""upstream": "https://api.example", "scopes": ["api://todo/Read"] } ] }"#).utf8
            ).write(to: URL(fileURLWithPath: file))
            var environment = TestAccounts.environment(provider)
            environment["XDG_STATE_HOME"] = directory + "/state"
            let unknown = try await CommandLineTests.run(["token", "nope", "--config", file], environment: environment)
            #expect(unknown.status == 2)
            #expect(unknown.stderr.contains("/todo"))
            #expect(unknown.stdout.isEmpty)
            provider.revokeRefreshTokens(for: .alice)
            let expired = try await CommandLineTests.run(
                ["token", "/todo", "--config", file], environment: environment)
            #expect(expired.status == 1)
            #expect(expired.stdout.isEmpty)
            #expect(expired.stderr.contains("bearer-proxy login"))
        }
    }
}
