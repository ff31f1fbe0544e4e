import Foundation
import Synchronization
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

/// The `bearer-proxy` executable, run as a user runs it.
@Suite("Command line: check and serve")
struct CommandLineTests {
    static var binary: String {
        // The test bundle and the executable are built into the same products directory.
        let products =
            Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return products.appendingPathComponent("bearer-proxy").path
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "bearer-proxy-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Python.Result {
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "BEARER_PROXY_CONFIG")
        for (key, value) in environment { merged[key] = value }
        return try await ChildProcess.run(binary, arguments, environment: merged)
    }

    @Test("check accepts the shipped routes.json: exit 0, one line per route")
    func checkShippedConfiguration() async throws {
        let result = try await Self.run(["check", "--config", Self.repositoryRoot + "/routes.json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("OK"))
        #expect(result.stdout.contains("/api1 → http://127.0.0.1:8080/-/echo/api1"))
        #expect(result.stdout.contains("/api2 → http://127.0.0.1:8080/-/echo/api2"))
    }

    @Test("check lists every problem with its JSON path on stderr and exits 2")
    func checkReportsEveryProblem() async throws {
        let directory = try Self.temporaryDirectory()
        let file = directory + "/routes.json"
        try Data(
            #"""
            { "listen": "nowhere", "account": { "flow": "dev" },
              "routes": [ { "prefix": "api", "upstream": "http://example.com", "scopes": ["api://a/R"] },
                          { "prefix": "/b", "upstream": "https://b.example", "scope": ["x"] } ] }
            """#.utf8
        ).write(to: URL(fileURLWithPath: file))
        let result = try await Self.run(["check", "--config", file])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        for path in ["listen:", "routes[0].prefix:", "routes[0].upstream:", "routes[1].scope:"] {
            #expect(result.stderr.contains(path), "missing \(path) in: \(result.stderr)")
        }
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test("a missing config file is a configuration error (exit 2), $BEARER_PROXY_CONFIG is honoured")
    func missingConfiguration() async throws {
        let result = try await Self.run(["check"], environment: ["BEARER_PROXY_CONFIG": "/nonexistent/routes.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/routes.json"))
    }

    @Test("usage errors exit 2")
    func usageError() async throws {
        let result = try await Self.run(["serve", "--no-such-flag"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--no-such-flag"))
    }

    @Test(
        "serve's time-limit options take seconds greater than 0: anything else is a usage error naming the option",
        arguments: [
            ["--request-head-timeout", "0"], ["--body-stall-timeout", "-1"], ["--idle-timeout", "90000"],
            ["--shutdown-grace", "0"],
            ["--request-head-timeout", "soon"],
        ])
    func timeLimitOptions(_ option: [String]) async throws {
        let result = try await Self.run(["serve"] + option)
        #expect(result.status == 2)
        #expect(result.stderr.contains(option[0]))
    }

    @Test("serve proxies, keeps its key 0600 in the state directory, and exits 0 on SIGTERM")
    func serveAndStop() async throws {
        let state = try Self.temporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state
        let (port, output) = try await ChildProcess.withListening(
            ["serve", "--config", Self.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:0"],
            environment: environment
        ) { port, running in
            let health = try await Self.waitUntilHealthy(port: port)
            #expect(health)
            // The shipped routes point at 127.0.0.1:8080, so call the proxy's own echo through /-/echo directly.
            let echo = try await TestClient.send(port: port, uri: "/-/echo/direct?q=1")
            #expect(echo.status == .ok)
            let keyFile = state + "/bearer-proxy/" + DevIssuer.keyFileName
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
            #expect(attributes[.posixPermissions] as? Int == 0o600)
            running.signal(SIGTERM)
            return port
        }
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.contains("listening on http://127.0.0.1:\(port)"))
        #expect(output.stderr.contains("route /api1"))
        #expect(!output.stderr.contains("ERROR"))
    }

    @Test("SIGTERM the moment serve answers — before its service group may have started — still exits 0")
    func earlySigterm() async throws {
        for _ in 0..<3 {
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_STATE_HOME"] = try Self.temporaryDirectory()
            let (_, output) = try await ChildProcess.withListening(
                ["serve", "--config", Self.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:0"],
                environment: environment
            ) { port, running in
                let healthy = try await Self.waitUntilHealthy(port: port)
                #expect(healthy)
                running.signal(SIGTERM)
            }
            #expect(output.status == 0, "\(output.stderr)")
        }
    }

    @Test("serve on a port that is taken fails with one line and exit 1")
    func portInUse() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let result = try await Self.run([
                "serve", "--config", Self.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:\(upstream.port)",
                "--no-persist",
            ])
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot listen on 127.0.0.1:\(upstream.port)"))
        }
    }

    @Test("serve on a non-loopback address without a key or allowRemote is refused with exit 2")
    func remoteListenRefused() async throws {
        let result = try await Self.run([
            "serve", "--config", Self.repositoryRoot + "/routes.json", "--listen", "0.0.0.0:0", "--no-persist",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("BEARER_PROXY_KEY"))
        #expect(result.stderr.contains("allowRemote"))
    }

    @Test("serve at debug level prints no client key and nothing token-shaped")
    func debugOutputHasNoSecrets() async throws {
        let key = "cli-key-5be1f0c3-never-logged"
        var environment = ProcessInfo.processInfo.environment
        environment["BEARER_PROXY_KEY"] = key
        let (_, output) = try await ChildProcess.withListening(
            [
                "serve", "--config", Self.repositoryRoot + "/routes.json", "--listen", "0.0.0.0:0", "--no-persist",
                "--log-level", "trace",
            ],
            environment: environment
        ) { port, running in
            #expect(try await Self.waitUntilHealthy(port: port))
            let withKey = try await TestClient.send(
                port: port, uri: "/-/echo/x",
                headers: [("X-Bearer-Proxy-Key", key), ("Authorization", "Bearer eyJclient")])
            #expect(withKey.status == .ok)
            let without = try await TestClient.send(port: port, uri: "/-/echo/x")
            #expect(without.status == .unauthorized)
            let wrong = try await TestClient.send(
                port: port, uri: "/-/echo/x", headers: [("X-Bearer-Proxy-Key", "x" + key)])
            #expect(wrong.status == .unauthorized)
            running.signal(SIGTERM)
        }
        #expect(output.status == 0)
        let printed = output.stdout + output.stderr
        let leakedKey = printed.contains(key)
        let leakedJWT = printed.contains("eyJ")
        #expect(!leakedKey, "the client key was printed")
        #expect(!leakedJWT, "something token-shaped was printed")
        #expect(output.stderr.contains("non-loopback"))
    }

    @Test("SIGHUP reloads routes.json in a running serve; SIGTERM then exits 0")
    func sighupReloads() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let directory = try Self.temporaryDirectory()
            let file = directory + "/routes.json"
            func write(prefix: String) throws {
                try Data(
                    #"{ "account": { "flow": "dev" }, "routes": [ { "prefix": "\#(prefix)", "#
                        .appending(#""upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] } ] }"#).utf8
                ).write(to: URL(fileURLWithPath: file))
            }
            try write(prefix: "/before")
            let (_, output) = try await ChildProcess.withListening(
                ["serve", "--config", file, "--listen", "127.0.0.1:0", "--no-persist"]
            ) { port, running in
                #expect(try await Self.waitUntilHealthy(port: port))
                #expect(try await TestClient.send(port: port, uri: "/before/x").status == .ok)
                try write(prefix: "/after")
                running.signal(SIGHUP)
                var reloaded = false
                for _ in 0..<200 where !reloaded {
                    reloaded = try await TestClient.send(port: port, uri: "/after/x").status == .ok
                    if !reloaded { try await Task.sleep(for: .milliseconds(25)) }
                }
                #expect(reloaded)
                #expect(try await TestClient.send(port: port, uri: "/before/x").status == .notFound)
                running.signal(SIGTERM)
            }
            #expect(output.status == 0)
            #expect(output.stderr.contains("reloaded"))
        }
    }

    @Test("SIGTERM during 200 concurrent slow requests: every one completes, then the process exits 0")
    func sigtermUnderLoad() async throws {
        let slow = SlowUpstream()
        try await withUpstream(slow.behaviour) { upstream in
            let directory = try Self.temporaryDirectory()
            let file = directory + "/routes.json"
            try Data(
                #"{ "account": { "flow": "dev" }, "routes": [ { "prefix": "/slow", "#
                    .appending(#""upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] } ] }"#).utf8
            ).write(to: URL(fileURLWithPath: file))
            let (_, output) = try await ChildProcess.withListening(
                // The grace is what this test is not about: on a machine busy with the whole suite, SIGTERM, the
                // refusal seen and 200 bodies relayed can take longer than the default 10 s.
                ["serve", "--config", file, "--listen", "127.0.0.1:0", "--no-persist", "--shutdown-grace", "120"]
            ) { port, running in
                #expect(try await Self.waitUntilHealthy(port: port))
                // The time 200 requests take to reach the upstream is not what this is about: on a machine busy with
                // the whole suite the first answer's head can wait longer than a client's usual 30 s for the last.
                let patience = Duration.seconds(120)
                try await withThrowingTaskGroup(of: TestResponse.self) { group in
                    for _ in 0..<200 {
                        group.addTask { try await TestClient.send(port: port, uri: "/slow/x", timeout: patience) }
                    }
                    try await upstream.waitForRequests(200, timeout: patience)
                    running.signal(SIGTERM)
                    // The listener closes first.
                    let refused = try await waitUntilConnectionsRefused(port: port)
                    #expect(refused)
                    slow.finishAll(with: "data: done\n\n")
                    var completed = 0
                    for try await response in group where response.status == .ok { completed += 1 }
                    #expect(completed == 200)
                }
            }
            #expect(output.status == 0, "\(output.stderr)")
        }
    }

    /// Polls `/-/health` until the freshly started process answers (bounded: 10 s).
    static func waitUntilHealthy(port: Int) async throws -> Bool {
        for _ in 0..<200 {
            if let response = try? await TestClient.send(port: port, uri: "/-/health", timeout: .seconds(1)),
                response.status == .ok
            {
                return true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
