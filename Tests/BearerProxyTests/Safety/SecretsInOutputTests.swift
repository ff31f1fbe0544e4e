import Foundation
import Logging
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

@Suite("Security: secrets never appear in output")
struct SecretsInOutputTests {
    static let key = "client-key-9d2e7a1b-do-not-print"

    /// Runs a busy scenario — tokens minted and injected, refusals, errors, the echo endpoint — with every log line
    /// captured at trace level, then scans logs and response bodies for the token and the client key.
    @Test("tokens and the client key appear in no log line (trace level) and no response body")
    func scan() async throws {
        let store = CapturingLogHandler.Store()
        var bodies: [String] = []
        var tokens: [String] = []
        try await ProxyHarness.with(
            // The fake upstream answers without mirroring headers: only the proxy's own output is under test.
            upstream: { head in .respond(status: head.uri.hasSuffix("/fail") ? 500 : 200, text: "upstream") },
            configuration: #""requireKey": true"#, environment: ["BEARER_PROXY_KEY": Self.key],
            logger: CapturingLogHandler.logger(into: store)
        ) { proxy, _ in
            let key = [("X-Bearer-Proxy-Key", Self.key)]
            for uri in ["/api/ok", "/api/fail", "/nowhere", "/api/../x", "/-/echo/x", "/-/jwks.json"] {
                bodies.append(try await TestClient.send(port: proxy.port, uri: uri, headers: key).bodyText)
            }
            bodies.append(
                try await TestClient.send(
                    port: proxy.port, uri: "/api/x", headers: [("X-Bearer-Proxy-Key", "wrong-" + Self.key)]
                ).bodyText)
            bodies.append(
                try await TestClient.send(
                    port: proxy.port, uri: "/api/x", headers: key + [("Origin", "https://evil.example")]
                ).bodyText)
            let token = try #require(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://api/Read"])))
            tokens.append(token.value)
        }
        let secrets = [Self.key] + tokens + tokens.map { String($0.split(separator: ".")[2]) }
        let logs = store.all.joined(separator: "\n")
        #expect(!store.all.isEmpty, "the scenario logged nothing; the scan would prove nothing")
        let output = bodies.joined(separator: "\n")
        for (index, secret) in secrets.enumerated() {
            // Booleans, so that a failure does not print the secret it found.
            let inLogs = logs.contains(secret)
            let inBodies = output.contains(secret)
            #expect(!inLogs, "secret #\(index) appeared in the logs")
            #expect(!inBodies, "secret #\(index) appeared in a response body")
        }
    }
}

extension SecretsInOutputTests {
    /// A discovered route through a step-up, a discovery again and a sign-in required (#25 item 8): each has its
    /// log line and its count, and no token, code, verifier or client secret is in any of them.
    @Test("a discovered route's discovery, step-up and sign-in required: logged and counted, never a secret")
    func discoveredRoute() async throws {
        let secret = "discovered-client-secret-do-not-print"
        var fake = FakeAuthorizationServer.Settings()
        fake.secrets = ["conf": secret]
        try await DiscoveredSignInTests.withServer(fake) { server, scratch in
            let environment = ["MCP_CLIENT_SECRET": secret]
            _ = try await DiscoveredSignInTests.signIn(
                server, state: scratch.state,
                settings: DiscoverySettings(clientID: "conf", clientSecretEnv: "MCP_CLIENT_SECRET"),
                environment: environment
            ).get()
            let routes = server.routes(discovery: #""clientId": "conf", "clientSecretEnv": "MCP_CLIENT_SECRET""#)
            let store = CapturingLogHandler.Store()
            var bodies: [String] = []
            var metrics: [String: Double] = [:]
            try await ProxyHarness.with(
                routes: routes, environment: environment, stateDirectory: scratch.state,
                logger: CapturingLogHandler.logger(into: store)
            ) { proxy in
                func send() async throws -> TestResponse {
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    bodies.append(response.bodyText)
                    return response
                }
                #expect(try await send().status == .ok)
                server.update { $0.requiredScopes = ["mcp:write"] }
                #expect(try await send().status == .forbidden)  // step-up
                server.update { $0.requiredScopes = [] }
                server.revokeAccessTokens()
                #expect(try await send().status == .ok)  // discovery again (confirmed), a refresh
                let signIns = DiscoveredSignInStore(directory: scratch.state)
                let key = try #require(try signIns.routeKey(upstream: server.resource))
                try signIns.updateSignIn(key) { $0?.refreshToken = "rt-revoked" }
                server.revokeAccessTokens()
                #expect(try await send().status == .unauthorized)  // its refresh token refused: sign-in required
                let status = try await TestClient.send(port: proxy.port, uri: "/-/status")
                bodies.append(status.bodyText)
                let exposition = try await TestClient.send(port: proxy.port, uri: "/-/metrics")
                bodies.append(exposition.bodyText)
                metrics = try await OperationsTests.samples(port: proxy.port)
            }
            #expect(metrics[#"bearer_proxy_step_ups_total{outcome="answered",route="/a"}"#] == 1)
            #expect(metrics[#"bearer_proxy_discoveries_total{outcome="confirmed",route="/a"}"#] == 1)
            #expect(metrics[#"bearer_proxy_token_requests_total{flow="discover",outcome="sign_in_required"}"#] == 1)
            let logs = store.all.joined(separator: "\n")
            for line in ["step-up required", "discovery started", "discovery succeeded", "sign_in_required"] {
                #expect(logs.contains(line), "no log line says \(line)")
            }
            let forms = server.tokenForms
            let codes = forms.compactMap { $0["code"] } + forms.compactMap { $0["code_verifier"] }
            let secrets = [secret] + server.issuedTokens + codes
            #expect(secrets.count > 6)
            let output = bodies.joined(separator: "\n")
            for (index, secret) in secrets.enumerated() {
                // Booleans, so that a failure does not print the secret it found.
                let inLogs = logs.contains(secret)
                let inBodies = output.contains(secret)
                #expect(!inLogs, "secret #\(index) appeared in the logs")
                #expect(!inBodies, "secret #\(index) appeared in a response body or the metrics")
            }
        }
    }
}
