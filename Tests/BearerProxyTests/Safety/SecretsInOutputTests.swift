import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Foundation
import Logging
import Testing

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
