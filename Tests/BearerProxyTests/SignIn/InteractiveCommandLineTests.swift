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

/// The interactive flows through the real `bearer-proxy` binary: a pseudo terminal for the person, the fake
/// identity provider for Microsoft.
@Suite("Command line: interactive sign-in (login, serve without a terminal, Ctrl-C, the browser)")
struct InteractiveCommandLineTests {
    static let password = NativeSignInTests.password

    /// A routes.json with `account` and the two routes of `SignInHarness.twoRoutes`, pointing at `upstream`.
    static func configuration(account: String, upstream: String = "https://api.example") throws -> (
        file: String, directory: String
    ) {
        let directory = try CommandLineTests.temporaryDirectory()
        let file = directory + "/routes.json"
        let routes = SignInHarness.twoRoutes.replacingOccurrences(of: "https://todo.example", with: upstream + "/todo")
            .replacingOccurrences(of: "https://graph.example", with: upstream + "/graph")
        try Data(#"{ "account": \#(account), "routes": \#(routes) }"#.utf8).write(to: URL(fileURLWithPath: file))
        return (file, directory)
    }

    static func environment(state: String, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "BEARER_PROXY_CONFIG")
        environment.removeValue(forKey: "BROWSER")
        environment["XDG_STATE_HOME"] = state
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    @Test("login with the native flow reads the password at a hidden prompt: the terminal never shows it")
    func hiddenPassword() async throws {
        try await withIdentityProvider { provider in
            let account = SignInHarness.native(provider).replacingOccurrences(
                of: #", "passwordEnv": "\#(SignInHarness.passwordVariable)""#, with: "")
            let (file, directory) = try Self.configuration(account: account)
            let environment = Self.environment(state: directory + "/state")
            let terminal = try PseudoTerminal()
            let status = try await terminal.run(
                CommandLineTests.binary, ["login", "--config", file], environment: environment
            ) { _ in
                try await terminal.waitFor("Password for alice@contoso.example: ")
                terminal.type(Self.password + "\n")
            }
            try await terminal.waitFor("Signed in (native).")
            #expect(status == 0, "\(terminal.text)")
            #expect(!terminal.text.contains(Self.password), "the password was echoed")
            #expect(terminal.text.contains(FakeIdentityProvider.User.alice.name))

            let report = try await CommandLineTests.run(["status", "--config", file], environment: environment)
            #expect(report.stdout.contains("alice@contoso.example"), "\(report.stdout)")
            #expect(provider.tokenRequests.map(\.grantType) == ["password", "refresh_token", "refresh_token"])
        }
    }

    @Test(
        "serve without a terminal answers 401 'run: bearer-proxy login'; a login elsewhere is picked up, and both routes use tokens from that one sign-in"
    )
    func serveThenLoginElsewhere() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let (file, directory) = try Self.configuration(
                    account: SignInHarness.native(provider), upstream: upstream.baseURL)
                // The proxy's environment has no password: nobody can sign it in where it runs.
                let serveEnvironment = Self.environment(state: directory + "/state")
                let environment = Self.environment(
                    state: directory + "/state", [SignInHarness.passwordVariable: Self.password])
                let (_, output) = try await ChildProcess.withListening(
                    ["serve", "--config", file, "--listen", "127.0.0.1:0"], environment: serveEnvironment
                ) { port, serve in
                    #expect(try await CommandLineTests.waitUntilHealthy(port: port))

                    let refused = try await TestClient.send(port: port, uri: "/todo/items")
                    #expect(refused.status == .unauthorized)
                    #expect(refused.headers.first(name: "content-type") == "application/problem+json")
                    #expect(refused.bodyText.contains("bearer-proxy login"))
                    #expect(upstream.requests.isEmpty)

                    let login = try await CommandLineTests.run(["login", "--config", file], environment: environment)
                    #expect(login.status == 0, "\(login.stderr)")

                    var answered = try await TestClient.send(port: port, uri: "/todo/items")
                    for _ in 0..<200 where answered.status != .ok {
                        try await Task.sleep(for: .milliseconds(25))
                        answered = try await TestClient.send(port: port, uri: "/todo/items")
                    }
                    #expect(answered.status == .ok)
                    let todo = try jwtClaims(try answered.echo().header("authorization"))
                    let graph = try jwtClaims(
                        try await TestClient.send(port: port, uri: "/graph/me").echo().header("authorization"))
                    #expect(todo["aud"] as? String == "api://todo")
                    #expect(graph["aud"] as? String == "https://graph.microsoft.com")
                    // One interactive sign-in, then one refresh-token request per scope set — for both processes.
                    #expect(provider.tokenRequests.map(\.grantType) == ["password", "refresh_token", "refresh_token"])
                    #expect(provider.tokenRequestCount(forScope: SignInHarness.todoScope) == 1)
                    #expect(provider.tokenRequestCount(forScope: SignInHarness.graphScope) == 1)

                    serve.signal(SIGTERM)
                }
                #expect(output.status == 0)
                #expect(output.stderr.contains("not signed in"))
                #expect(!output.stderr.contains(Self.password))
            }
        }
    }

    @Test("serve without a terminal signs a native account in by itself when the password is in the environment")
    func serveSignsInWithPasswordFromEnvironment() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let (file, directory) = try Self.configuration(
                    account: SignInHarness.native(provider), upstream: upstream.baseURL)
                let environment = Self.environment(
                    state: directory + "/state", [SignInHarness.passwordVariable: Self.password])
                let (_, output) = try await ChildProcess.withListening(
                    ["serve", "--config", file, "--listen", "127.0.0.1:0"], environment: environment
                ) { port, serve in
                    #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                    let answered = try await TestClient.send(port: port, uri: "/todo/items")
                    #expect(answered.status == .ok, "\(answered.bodyText)")
                    #expect(provider.tokenRequests.first?.grantType == "password")
                    serve.signal(SIGTERM)
                }
                #expect(output.status == 0)
                #expect(!output.stderr.contains(Self.password))
            }
        }
    }

    @Test("device code at a terminal: dots while waiting; Ctrl-C: 'Sign-in cancelled.', exit 130, nothing stored")
    func deviceCodeInterrupted() async throws {
        try await withIdentityProvider { provider in
            provider.setDeviceCodeInterval(1)
            let (file, directory) = try Self.configuration(account: SignInHarness.deviceCode(provider))
            let environment = Self.environment(state: directory + "/state")
            let terminal = try PseudoTerminal()
            let status = try await terminal.run(
                CommandLineTests.binary, ["login", "--config", file], environment: environment
            ) { login in
                try await provider.waitForDeviceCodeRequests(1)
                let code = try #require(provider.lastDeviceAuthorization?.userCode)
                try await terminal.waitFor("enter the code \(code)")
                // On a terminal the wait shows as dots on one line, one per poll.
                try await provider.waitForDevicePolls(2)
                try await terminal.waitFor("Waiting for you to enter the code \(code) at")
                try await terminal.waitFor(" ..")
                login.signal(SIGINT)
            }
            try await terminal.waitFor("Sign-in cancelled.")
            #expect(status == 130, "\(terminal.text)")
            let stored = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/state/bearer-proxy")) ?? []
            #expect(!stored.contains { $0.hasSuffix(".json") }, "\(stored)")
        }
    }

    @Test("login with the browser flow: $BROWSER opens the URL (curl plays the browser), the code is redeemed")
    func browserLogin() async throws {
        try await withIdentityProvider { provider in
            let (file, directory) = try Self.configuration(account: SignInHarness.browser(provider))
            let environment = Self.environment(
                state: directory + "/state", ["BROWSER": "curl --silent --location --output /dev/null"])
            let login = try await CommandLineTests.run(["login", "--config", file], environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Sign in with your browser at:"))
            #expect(login.stderr.contains("Opened in your browser"))
            #expect(login.stdout.contains("Signed in (browser)."))
            #expect(provider.authorizeRequests.count == 1)
            #expect(
                provider.tokenRequests.map(\.grantType) == ["authorization_code", "refresh_token", "refresh_token"])
        }
    }
}
