import Foundation
import Logging
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

/// `client-credentials` with `clientAssertion`: a JWT the platform issues (a Kubernetes service-account token)
/// presented as the client assertion. The fake provider checks it as Entra checks a federated identity credential:
/// ES256 signature with a key of the issuer's JWKS, `iss`, `sub`, `aud`, time range.
@Suite("Client credentials with a platform-issued assertion")
struct FederatedAssertionTests {
    static let clientID = "00003333-cccc-4444-dddd-5555eeee6666"
    static let variable = "TEST_FEDERATED_TOKEN"

    /// A fake provider on which `clientID` accepts `platform`'s tokens for the test service account.
    static func withProvider<T>(
        _ platform: WorkloadIssuer, _ body: (FakeIdentityProvider) async throws -> T
    ) async throws -> T {
        var configuration = FakeIdentityProvider.Configuration()
        configuration.clients.append(
            FakeIdentityProvider.Client(
                id: clientID, federatedCredentials: [platform.credential()], roles: ["Tasks.Read.All"]))
        return try await withIdentityProvider(configuration, body)
    }

    /// A scratch directory for the token file, removed afterwards.
    static func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("federated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Writes `text` as the kubelet does: the new content appears at once, whole.
    static func write(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file, options: .atomic)
    }

    static func account(
        _ provider: FakeIdentityProvider, assertion: String, issuer: Bool = false, extra: String = ""
    ) -> String {
        let endpoint = issuer ? #""issuer": "\#(provider.oidcIssuer)""# : #""authority": "\#(provider.authority)""#
        return #"{ "flow": "client-credentials", \#(endpoint), "clientId": "\#(clientID)", "#
            + #""clientAssertion": \#(assertion)\#(extra) }"#
    }

    static func file(_ file: URL) -> String { #"{ "file": "\#(file.path)" }"# }

    /// A proxy with `account` whose routes `/a`, `/b` and `/c` reach an echo upstream with `api://a/.default`,
    /// `api://b/.default` and `api://c/.default`: one token request per route.
    static func withProxy<T>(
        account: String, environment: [String: String] = [:], logger: Logger = ProxyHarness.silentLogger,
        _ body: (ProxyHarness, FakeUpstream) async throws -> T
    ) async throws -> T {
        try await withUpstream({ _ in .echo }) { upstream in
            let routes = ["a", "b", "c"].map { route("/\($0)", to: upstream, scopes: ["api://\($0)/.default"]) }
            return try await ProxyHarness.with(
                routes: "[" + routes.joined(separator: ", ") + "]", account: account, environment: environment,
                logger: logger
            ) { proxy in try await body(proxy, upstream) }
        }
    }

    /// Entra's form (`authority`) and an OIDC issuer's (with `extraParameters`).
    @Test(
        "file: the upstream gets the bearer; the fake checked the ES256 assertion against the JWKS, iss, sub, aud, exp",
        arguments: [false, true])
    func fileSource(issuer: Bool) async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("azure-identity-token")
                try Self.write(platform.assertion(jti: "first") + "\n", to: file)
                let extra = issuer ? #", "extraParameters": {"resource": "api://a"}"# : ""
                let account = Self.account(provider, assertion: Self.file(file), issuer: issuer, extra: extra)
                try await Self.withProxy(account: account) { proxy, _ in
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .ok, "\(response.bodyText)")
                    let claims = try jwtClaims(try response.echo().header("authorization"))
                    #expect(claims["aud"] as? String == "api://a")
                    #expect(claims["azp"] as? String == Self.clientID)
                }
                let request = try #require(provider.tokenRequests.last)
                #expect(provider.tokenRequestCount == 1)
                #expect(request.grantType == "client_credentials")
                #expect(request.authMethod == .assertion(alg: "ES256"))
                #expect(request.assertionFailure == nil)
                #expect(request.parameters["client_assertion_type"] == ClientCredentialsFlow.jwtBearer)
                #expect(request.clientID == Self.clientID)
                #expect(request.scope == "api://a/.default")
                #expect(request.path.hasSuffix(issuer ? "/oidc/token" : "/contoso/oauth2/v2.0/token"))
                #expect(request.parameters["resource"] == (issuer ? "api://a" : nil))
                let assertion = try #require(provider.lastAssertion)
                #expect(assertion.claims["jti"] as? String == "first")
                #expect(assertion.claims["sub"] as? String == WorkloadIssuer.serviceAccount)
            }
        }
    }

    @Test("the file is read at each token request: after the platform rotates it, the next request carries the new one")
    func rotatedFile() async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                try Self.write(platform.assertion(jti: "first"), to: file)
                try await Self.withProxy(account: Self.account(provider, assertion: Self.file(file))) { proxy, _ in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                    #expect(provider.lastAssertion?.claims["jti"] as? String == "first")
                    try Self.write(platform.assertion(jti: "second"), to: file)
                    #expect(try await TestClient.send(port: proxy.port, uri: "/b/x").status == .ok)
                    #expect(provider.lastAssertion?.claims["jti"] as? String == "second")
                }
                #expect(provider.tokenRequests.map(\.assertionFailure) == [nil, nil])
                #expect(provider.tokenRequests.map(\.scope) == ["api://a/.default", "api://b/.default"])
            }
        }
    }

    @Test("a missing file: 503 naming the file, nothing sent to the provider or the upstream, the proxy keeps serving")
    func missingFile() async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                try Self.write(platform.assertion(), to: file)  // there at start-up, as the configuration requires
                try await Self.withProxy(account: Self.account(provider, assertion: Self.file(file))) {
                    proxy, upstream in
                    try FileManager.default.removeItem(at: file)
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.header("retry-after") != nil)
                    let detail = try response.problemDetail()
                    #expect(detail.contains("the client assertion file \(file.path) does not exist"), "\(detail)")
                    #expect(upstream.requests.isEmpty)
                    #expect(try await TestClient.send(port: proxy.port, uri: "/-/health").status == .ok)
                }
                #expect(provider.tokenRequestCount == 0)
            }
        }
    }

    @Test("an expired assertion is refused before it is sent: 503 naming the file and its expiry, never its content")
    func expiredAssertion() async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                let expired = platform.assertion(issuedAt: Date() - 7200, lifetime: 3600)
                try Self.write(expired, to: file)
                try await Self.withProxy(account: Self.account(provider, assertion: Self.file(file))) { proxy, _ in
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .serviceUnavailable)
                    let detail = try response.problemDetail()
                    #expect(detail.contains("the client assertion file \(file.path) expired at "), "\(detail)")
                    #expect(!response.bodyText.contains(expired.split(separator: ".")[1]))
                }
                #expect(provider.tokenRequestCount == 0)
            }
        }
    }

    /// Texts that are not a compact JWS: empty, one or two parts, four, an empty part, padding, characters outside
    /// base64url, a header or claims that are not JSON objects.
    static let notJWTs = [
        "", " \n", "not-a-jwt", "e30.e30", "e30.e30.c2ln.c2ln", "e30.e30.", ".e30.c2ln", "e30.e30.c2ln=",
        "e30.e3+.c2ln", "e30.bm9wZQ.c2ln", "bm9wZQ.e30.c2ln", "WzFd.e30.c2ln",
    ]

    @Test("not a JWT: refused before sending, naming the file and never quoting it", arguments: notJWTs)
    func notAJWT(text: String) async throws {
        try await Self.withDirectory { directory in
            let file = directory.appendingPathComponent("token")
            try Self.write(text, to: file)
            let assertion = try FederatedAssertion(source: .file(file.path), environment: [:])
            let error = await #expect(throws: TokenError.self) { try await assertion.current(now: Date()) }
            guard case .providerUnavailable(let reason, let retryAfter)? = error else {
                Issue.record("expected a 503, got \(String(describing: error))")
                return
            }
            #expect(retryAfter == FederatedAssertion.retryAfterSeconds)
            #expect(reason.hasPrefix("the client assertion file \(file.path) "), "\(reason)")
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(trimmed.isEmpty ? reason.hasSuffix(" is empty") : !reason.contains(trimmed), "\(reason)")
        }
    }

    @Test("tokenEnv: the JWT from the environment is presented")
    func environmentSource() async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            let account = Self.account(provider, assertion: #"{ "tokenEnv": "\#(Self.variable)" }"#)
            let environment = [Self.variable: platform.assertion(jti: "from-env")]
            try await Self.withProxy(account: account, environment: environment) { proxy, _ in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok, "\(response.bodyText)")
            }
            #expect(provider.tokenRequests.last?.assertionFailure == nil)
            #expect(provider.lastAssertion?.claims["jti"] as? String == "from-env")
        }
    }

    @Test("fileEnv: the file that AZURE_FEDERATED_TOKEN_FILE names is read")
    func fileFromEnvironment() async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("azure-identity-token")
                try Self.write(platform.assertion(jti: "via-file-env"), to: file)
                let account = Self.account(provider, assertion: #"{ "fileEnv": "AZURE_FEDERATED_TOKEN_FILE" }"#)
                let environment = ["AZURE_FEDERATED_TOKEN_FILE": file.path]
                try await Self.withProxy(account: account, environment: environment) { proxy, _ in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
                    try FileManager.default.removeItem(at: file)
                    let detail = try await TestClient.send(port: proxy.port, uri: "/b/x").problemDetail()
                    #expect(
                        detail.contains("the client assertion file \(file.path) (named by AZURE_FEDERATED_TOKEN_FILE)"),
                        "\(detail)")
                }
                #expect(provider.lastAssertion?.claims["jti"] as? String == "via-file-env")
            }
        }
    }

    @Test(
        "command: its stdout is the assertion, as a JWT or as GitHub's {\"value\": …} JSON", arguments: [false, true])
    func commandSource(json: Bool) async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                try Self.write(platform.assertion(jti: "from-command"), to: file)
                let argv =
                    json
                    ? ["sh", "-c", #"printf '{"count":1,"value":"%s"}' "$(cat "$0")""#, file.path] : ["cat", file.path]
                let command = String(decoding: try JSONSerialization.data(withJSONObject: argv), as: UTF8.self)
                let account = Self.account(provider, assertion: #"{ "command": \#(command), "timeoutSeconds": 20 }"#)
                try await Self.withProxy(account: account) { proxy, _ in
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .ok, "\(response.bodyText)")
                }
                #expect(provider.tokenRequests.last?.assertionFailure == nil)
                #expect(provider.lastAssertion?.claims["jti"] as? String == "from-command")
            }
        }
    }

    @Test("a failing command: 503 naming the program and its exit status, quoting none of its output")
    func failingCommand() async throws {
        let source = ClientCredentialsAccount.AssertionSource.command(
            argv: ["sh", "-c", "echo printed-out; echo printed-err >&2; exit 3"], timeout: .seconds(20))
        let assertion = try FederatedAssertion(source: source, environment: [:])
        let error = await #expect(throws: TokenError.self) { try await assertion.current(now: Date()) }
        #expect(error?.reason == "the client assertion command sh exited with status 3")
    }

    /// What the fake refuses, as Entra would: each is a 500 naming `invalid_client`, and the upstream is untouched.
    enum Forgery: String, CaseIterable, Sendable {
        /// Signed with another key under the same issuer and `kid`.
        case otherKey
        /// A service account the credential does not name.
        case otherSubject
        /// An audience other than `api://AzureADTokenExchange`.
        case otherAudience
        /// An issuer the client has no federated credential for.
        case otherIssuer

        func assertion(_ platform: WorkloadIssuer) -> String {
            switch self {
            case .otherKey: WorkloadIssuer(url: platform.url, keyID: platform.keyID).assertion()
            case .otherSubject: platform.assertion(subject: "system:serviceaccount:other:intruder")
            case .otherAudience: platform.assertion(audience: "api://somewhere-else")
            case .otherIssuer: WorkloadIssuer().assertion()
            }
        }

        var check: FakeIdentityProvider.AssertionCheck {
            switch self {
            case .otherKey: .signature
            case .otherSubject: .federatedSubject
            case .otherAudience: .federatedAudience
            case .otherIssuer: .federatedIssuer
            }
        }
    }

    @Test("the provider's refusal of an assertion is a 500 naming invalid_client", arguments: Forgery.allCases)
    func refusedByProvider(forgery: Forgery) async throws {
        let platform = WorkloadIssuer()
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                try Self.write(forgery.assertion(platform), to: file)
                try await Self.withProxy(account: Self.account(provider, assertion: Self.file(file))) {
                    proxy, upstream in
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .internalServerError)
                    #expect(try response.problemDetail().contains("invalid_client"))
                    #expect(upstream.requests.isEmpty)
                }
                #expect(provider.tokenRequests.last?.assertionFailure == forgery.check)
            }
        }
    }

    @Test("each source is read into its settings; files resolve against routes.json's directory")
    func parsesEachSource() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
        let name = URL(fileURLWithPath: #filePath).lastPathComponent
        func source(_ assertion: String) throws -> ClientCredentialsAccount.AssertionSource? {
            let json = ConfigurationFixture.account(
                #"{"flow": "client-credentials", "issuer": "https://id.example.com", "clientId": "c", "#
                    + #""clientAssertion": \#(assertion)}"#,
                routes: [#"{"prefix": "/a", "upstream": "https://a.example.com", "scopes": ["api://a/.default"]}"#])
            let configuration = try Configuration.parse(
                Data(json.utf8), environment: ["TOKEN_FILE": name, "CI_TOKEN": "x"], baseDirectory: directory)
            guard case .clientCredentials(let account) = configuration.account.settings,
                case .clientAssertion(let source) = account.credential
            else { return nil }
            return source
        }
        let path = directory + "/" + name
        #expect(try source(#"{"file": "\#(name)"}"#) == .file(path))
        #expect(try source(#"{"fileEnv": "TOKEN_FILE"}"#) == .fileEnv(variable: "TOKEN_FILE", file: path))
        #expect(try source(#"{"tokenEnv": "CI_TOKEN"}"#) == .tokenEnv("CI_TOKEN"))
        #expect(try source(#"{"command": ["cat", "{x}"]}"#) == .command(argv: ["cat", "{x}"], timeout: .seconds(30)))
        #expect(
            try source(#"{"command": ["cat"], "timeoutSeconds": 2.5}"#)
                == .command(argv: ["cat"], timeout: .milliseconds(2500)))
    }

    @Test("configuration problems are listed together, each at its JSON path")
    func everyProblemAtOnce() {
        let json = ConfigurationFixture.account(
            #"{"flow": "client-credentials", "issuer": "https://id.example.com", "clientId": "c", "#
                + #""clientAuthentication": "basic", "#
                + #""clientAssertion": {"file": "/nonexistent/token", "timeoutSeconds": 5, "files": 1}}"#,
            routes: [#"{"prefix": "/a", "upstream": "https://a.example.com", "scopes": ["api://a/.default"]}"#])
        let problems = ConfigurationFixture.problems(json).map { "\($0.path): \($0.message)" }
        #expect(
            Set(problems) == [
                #"account.clientAssertion.files: unknown key (did you mean "file"?)"#,
                #"account.clientAssertion.timeoutSeconds: applies to "command" only"#,
                #"account.clientAssertion.file: file "/nonexistent/token" does not exist"#,
                "account.clientAuthentication: applies to a client secret, not a client assertion",
            ], "\(problems)")
    }

    @Test("the assertions appear in no log line (trace level), response body, status or metrics")
    func assertionNeverShown() async throws {
        let platform = WorkloadIssuer()
        let store = CapturingLogHandler.Store()
        var bodies: [String] = []
        let valid = platform.assertion()
        let expired = platform.assertion(issuedAt: Date() - 7200, lifetime: 3600)
        let refused = Forgery.otherSubject.assertion(platform)
        try await Self.withProvider(platform) { provider in
            try await Self.withDirectory { directory in
                let file = directory.appendingPathComponent("token")
                try Self.write(valid, to: file)
                try await Self.withProxy(
                    account: Self.account(provider, assertion: Self.file(file)),
                    logger: CapturingLogHandler.logger(into: store)
                ) { proxy, _ in
                    let expected: [(String, String, HTTPResponseStatus)] = [
                        (valid, "/a/x", .ok), (expired, "/b/x", .serviceUnavailable),
                        (refused, "/c/x", .internalServerError),
                    ]
                    for (assertion, uri, status) in expected {
                        try Self.write(assertion, to: file)
                        let response = try await TestClient.send(port: proxy.port, uri: uri)
                        #expect(response.status == status)
                        bodies.append(response.bodyText)
                    }
                    for uri in ["/-/status", "/-/metrics"] {
                        bodies.append(try await TestClient.send(port: proxy.port, uri: uri).bodyText)
                    }
                }
            }
        }
        let logs = store.all.joined(separator: "\n")
        #expect(!store.all.isEmpty, "the scenario logged nothing; the scan would prove nothing")
        let output = bodies.joined(separator: "\n")
        let secrets = [valid, expired, refused].flatMap { [$0, String($0.split(separator: ".")[2])] }
        for (index, secret) in secrets.enumerated() {
            // Booleans, so that a failure does not print the secret it found.
            let inLogs = logs.contains(secret)
            let inBodies = output.contains(secret)
            #expect(!inLogs, "assertion part #\(index) appeared in the logs")
            #expect(!inBodies, "assertion part #\(index) appeared in a response body, the status or the metrics")
        }
    }
}
