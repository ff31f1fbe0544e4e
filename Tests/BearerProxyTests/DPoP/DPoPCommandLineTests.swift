import Foundation
import NIOHTTP1
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

/// A DPoP account seen from outside: `token`, `status` and `serve` (real `bearer-proxy` processes and a real proxy),
/// against ``FakeDPoPAuthorizationServer``.
@Suite struct DPoPCommandLineTests {
    /// routes.json with a `client-credentials` DPoP account and route `/r0`; the environment names its state.
    static func machine(_ server: FakeDPoPAuthorizationServer) throws -> (config: String, environment: [String: String])
    {
        let directory = try CommandLineTests.temporaryDirectory()
        let config = directory + "/routes.json"
        let account = DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(server)
        try Data(#"{ "account": \#(account), "routes": [\#(DPoPTokenRequestTests.routes())] }"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let environment = InteractiveCommandLineTests.environment(
            state: directory + "/state", [DPoPTokenRequestTests.secretVariable: "s3cret"])
        return (config, environment)
    }

    @Test func tokenRefusesToPrintABoundTokenAlone() async throws {
        try await withDPoPAuthorizationServer { server in
            let (config, environment) = try Self.machine(server)
            let result = try await CommandLineTests.run(["token", "/r0", "--config", config], environment: environment)
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("this token is DPoP-bound (RFC 9449): it cannot be used alone"))
        }
    }

    @Test func tokenWithDPoPProofPrintsTheTokenAndAProofForThatRequest() async throws {
        try await withDPoPAuthorizationServer { server in
            let (config, environment) = try Self.machine(server)
            let url = "https://api.example.com/orders/7?expand=lines"
            let result = try await CommandLineTests.run(
                ["token", "/r0", "--dpop-proof", "get", url, "--config", config], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            try #require(lines.count == 2)
            var verifier = DPoPProofVerifier()
            let accepted = try verifier.verify(
                HTTPHeaders([("DPoP", lines[1])]), method: "GET", uri: "https://api.example.com/orders/7", now: Date(),
                nonce: nil, accessToken: lines[0]
            ).get()
            let claims = try #require(FakeIdentityJWT.split(lines[0])?.claims)
            #expect((claims["cnf"] as? [String: Any])?["jkt"] as? String == accepted.thumbprint)
        }
    }

    @Test func statusShowsTheTokenTypeAndTheKeysThumbprintButNeverTheKey() async throws {
        try await withDPoPAuthorizationServer { server in
            let (config, environment) = try Self.machine(server)
            let login = try await CommandLineTests.run(
                ["token", "/r0", "--dpop-proof", "GET", "https://a/x", "--config", config], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            let thumbprint = try #require(server.requests.first?.accepted?.thumbprint)
            let text = try await CommandLineTests.run(["status", "--config", config], environment: environment)
            #expect(text.stdout.contains("token type: dpop (DPoP key jkt \(thumbprint))"), "\(text.stdout)")
            #expect(text.stdout.contains("token: cached (DPoP-bound)"), "\(text.stdout)")
            let json = try await CommandLineTests.run(
                ["status", "--json", "--config", config], environment: environment)
            let document = try #require(JSONObject.dictionary(Data(json.stdout.utf8)))
            let account = try #require(document["account"] as? [String: Any])
            #expect(account["tokenType"] as? String == "dpop")
            #expect(account["dpopKeyThumbprint"] as? String == thumbprint)
            // The key file's private scalar appears in neither.
            let state = try #require(environment["XDG_STATE_HOME"]) + "/bearer-proxy"
            let keyName = try #require(
                try FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasPrefix("dpop-") })
            let stored = try #require(
                JSONObject.dictionary(try Data(contentsOf: URL(fileURLWithPath: state + "/" + keyName))))
            let secret = try #require(stored["privateKey"] as? String)
            #expect(!text.stdout.contains(secret) && !json.stdout.contains(secret))
            #expect(!text.stderr.contains(secret) && !json.stderr.contains(secret))
        }
    }

    /// A bound token is never sent as a bearer token: on a route that presents its token as a bearer token only, the
    /// request is answered by the proxy with the reason, and the upstream sees nothing.
    @Test func aBearerOnlyRouteAnswersABoundTokenWithAProblemAndNeverForwards() async throws {
        try await withDPoPAuthorizationServer { server in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes =
                    #"[{ "prefix": "/r0", "upstream": "\#(upstream.baseURL)", "scopes": ["api://orders/.default"], "#
                    + #""tokenType": "bearer" }]"#
                try await ProxyHarness.with(
                    routes: routes,
                    account: DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(server),
                    environment: [DPoPTokenRequestTests.secretVariable: "s3cret"]
                ) { proxy in
                    for _ in 0..<2 {
                        let response = try await TestClient.send(port: proxy.port, uri: "/r0/orders")
                        #expect(response.status == .internalServerError)
                        #expect(try response.problemDetail().contains("DPoP-bound token (RFC 9449)"))
                    }
                    #expect(upstream.requests.isEmpty)
                    // One token request: the refusal comes from the cache the second time.
                    #expect(server.requests.count == 1)
                }
            }
        }
    }

    /// A whole run at trace level — a nonce challenge, token requests, a forwarded request with its proof, `status` —
    /// logs neither the key, nor a proof, nor a token.
    @Test func noKeyProofOrTokenInAnyLogLine() async throws {
        let store = CapturingLogHandler.Store()
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer(nonce: .required) { server in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes =
                    #"[{ "prefix": "/r0", "upstream": "\#(upstream.baseURL)", "scopes": ["api://orders/.default"] }]"#
                let (token, upstreamProof) = try await ProxyHarness.with(
                    routes: routes,
                    account: DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(server),
                    environment: [DPoPTokenRequestTests.secretVariable: "s3cret"], stateDirectory: scratch.state,
                    logger: CapturingLogHandler.logger(into: store)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/r0/orders")
                    #expect(response.status == .ok)
                    let report = StatusReport(account: proxy.proxy.account)
                    store.append(report.text + String(decoding: report.json, as: UTF8.self))
                    let token = try await proxy.proxy.tokens.accessToken(
                        for: ScopeSet(["api://orders/.default"]), presentedAs: .auto)
                    return (token, try #require(try response.echo().header("dpop")))
                }
                let keyName = try #require(scratch.entries().first { $0.hasPrefix("dpop-") })
                let stored = try #require(
                    JSONObject.dictionary(
                        try Data(contentsOf: URL(fileURLWithPath: scratch.state.path + "/" + keyName))))
                let secrets =
                    [try #require(stored["privateKey"] as? String), token.value, upstreamProof]
                    + server.requests.flatMap(\.proofs)
                #expect(secrets.count >= 5)
                #expect(!store.all.isEmpty)
                for line in store.all {
                    for secret in secrets { #expect(!line.contains(secret)) }
                }
            }
        }
    }
}
