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

/// A discovered route's configured client with a secret from the environment (`discovery.clientSecretEnv`, #25
/// item 3): sent the way the authorization server's metadata allows at the code exchange and every refresh, and
/// never stored, logged or shown.
@Suite struct DiscoveredClientSecretTests {
    static let secret = "conf-secret-that-must-never-be-shown"
    static let environment = ["MCP_CLIENT_SECRET": secret]
    static let settings = DiscoverySettings(clientID: "conf", clientSecretEnv: "MCP_CLIENT_SECRET")

    @Test(
        "the secret goes as the metadata allows, at sign-in and at a refresh, and nowhere else",
        arguments: [
            ([String]?.none, "client_secret_basic"), (["client_secret_post"], "client_secret_post"),
            (["client_secret_post", "client_secret_basic"], "client_secret_basic"),
        ])
    func secretIsSent(methods: [String]?, expected: String) async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.secrets = ["conf": Self.secret]
        fake.authMethods = methods
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let console = ScriptedConsole(browser: true)
            let outcome = try await DiscoveredSignInTests.signIn(
                server, state: scratch.state, settings: Self.settings, console: console,
                environment: Self.environment
            ).get()
            #expect(outcome.clientKind == "configured" && outcome.clientID == "conf")
            #expect(server.tokenAuthentications == [expected])
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            try store.expireAccessToken(key)
            let routes = server.routes(discovery: #""clientId": "conf", "clientSecretEnv": "MCP_CLIENT_SECRET""#)
            let log = CapturingLogHandler.Store()
            let status = try await ProxyHarness.with(
                routes: routes, environment: Self.environment, stateDirectory: scratch.state,
                logger: CapturingLogHandler.logger(into: log)
            ) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
                return try await TestClient.send(port: proxy.port, uri: "/-/status")
            }
            #expect(server.tokenAuthentications == [expected, expected])
            #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
            // Never stored, logged or shown.
            #expect(!console.transcript.contains(Self.secret))
            #expect(!log.all.joined(separator: "\n").contains(Self.secret))
            #expect(!String(decoding: status.body, as: UTF8.self).contains(Self.secret))
            for name in scratch.entries() {
                let contents = (try? String(contentsOfFile: scratch.state.path + "/" + name, encoding: .utf8)) ?? ""
                #expect(!contents.contains(Self.secret), "\(name) holds the client secret")
            }
        }
    }

    @Test("without its secret, the confidential client is refused (invalid_client): the sign-in says so")
    func secretIsRequired() async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.secrets = ["conf": Self.secret]
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let outcome = try await DiscoveredSignInTests.signIn(
                server, state: scratch.state, settings: Self.settings, environment: [:])
            #expect(DiscoveredSignInTests.failure(outcome) != nil)
            #expect(server.tokenAuthentications == ["none"])
        }
    }
}
