import Foundation
import Subprocess
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

/// SPEC §7 "Several processes, one account" with real `bearer-proxy` processes on one state directory, against a
/// provider that rotates refresh tokens with no reuse grace and revokes the whole family on reuse (issue 13: every
/// round of this used to leave one `serve` signed out, with three refresh requests per scope set).
@Suite("Several processes, one account: real bearer-proxy processes sharing one token cache file")
struct SharedRefreshTokenProcessTests {
    /// What every process of a test shares: routes.json, the environment (state directory, refresh token) and the
    /// account's state directory and key.
    struct Machine {
        var file: String
        var environment: [String: String]
        var state: StateDirectory
        var accountKey: String
    }

    /// One scope set per route `/r<n>`.
    static let scopes = (0..<5).map { "api://round\($0)/Read" }

    /// A `refresh-token` account with routes `/r0` … `/r4` (one scope set each) to `upstream`'s `/r0` … `/r4`.
    static func machine(_ provider: FakeIdentityProvider, upstream: FakeUpstream) throws -> Machine {
        let directory = try CommandLineTests.temporaryDirectory()
        let file = directory + "/routes.json"
        let account = TestAccounts.refreshToken(provider)
        let routes =
            "["
            + scopes.indices.map { index in
                #"{ "prefix": "/r\#(index)", "upstream": "\#(upstream.baseURL)/r\#(index)", "#
                    + #""scopes": ["\#(scopes[index])"] }"#
            }.joined(separator: ", ") + "]"
        try Data(#"{ "account": \#(account), "routes": \#(routes) }"#.utf8).write(to: URL(fileURLWithPath: file))
        let environment = InteractiveCommandLineTests.environment(
            state: directory + "/state", [TestAccounts.refreshTokenVariable: provider.issueRefreshToken(for: .alice)])
        let configuration = try TestConfigurations.make(routes: routes, account: account, environment: environment)
        return Machine(
            file: file, environment: environment, state: StateDirectory(path: directory + "/state/bearer-proxy"),
            accountKey: AccountRuntime.accountKey(for: configuration.account.settings, devIssuerURL: ""))
    }

    /// What one request or command of a round ended with.
    enum Outcome: Sendable {
        case response(status: UInt)
        case command(status: Int32, token: String, stderr: String)
    }

    @Test(
        "three serves and two token commands, five rounds, each a new scope set at once: all 200, one request each"
    )
    func rounds() async throws {
        try await withIdentityProvider(SharedRefreshTokenTests.strictProvider()) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let machine = try Self.machine(provider, upstream: upstream)
                let (rounds, serves) = try await Self.serving(machine, count: 3) { ports in
                    var rounds: [[Outcome]] = []
                    for route in Self.scopes.indices {
                        rounds.append(try await Self.round(route: route, ports: ports, machine: machine))
                    }
                    return rounds
                }
                for (route, outcomes) in rounds.enumerated() {
                    var tokens: Set<String> = []
                    for outcome in outcomes {
                        switch outcome {
                        case .response(let status):
                            #expect(status == 200, "round \(route)")
                        case .command(let status, let token, let stderr):
                            #expect(status == 0, "round \(route): \(stderr)")
                            tokens.insert(token)
                        }
                    }
                    for request in upstream.requests where request.head.uri.hasPrefix("/r\(route)/") {
                        tokens.insert(String(request.head.header("authorization")?.dropFirst(7) ?? ""))
                    }
                    // One token for the scope set on the whole machine: the commands printed the one the serves sent.
                    #expect(tokens.count == 1, "round \(route)")
                    #expect(provider.refreshRedemptionCount(forScope: Self.scopes[route]) == 1, "round \(route)")
                }
                for serve in serves {
                    #expect(serve.status == 0, "\(serve.stderr)")
                    #expect(!serve.stderr.contains("invalid_grant"))
                }
                #expect(provider.refusedRedemptionCount == 0)
            }
        }
    }

    /// One round: every serve is asked for `/r<route>` ten times and two `token` commands for it, all at once.
    static func round(route: Int, ports: [Int], machine: Machine) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            for port in ports {
                for _ in 0..<10 {
                    group.addTask {
                        .response(status: try await TestClient.send(port: port, uri: "/r\(route)/x").status.code)
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    let result = try await CommandLineTests.run(
                        ["token", "/r\(route)", "--config", machine.file], environment: machine.environment)
                    return .command(
                        status: result.status, token: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                        stderr: result.stderr)
                }
            }
            return try await group.reduce(into: [Outcome]()) { $0.append($1) }
        }
    }

    @Test("a process killed with SIGKILL while it holds the redemption lock blocks nobody: the waiting ones carry on")
    func killedHolder() async throws {
        try await withIdentityProvider(SharedRefreshTokenTests.strictProvider()) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let machine = try Self.machine(provider, upstream: upstream)
                try machine.state.prepare()
                let routes = [0, 1, 0, 1]
                let (outputs, holder) = try await LockHolder.whileHeld(
                    state: machine.state, accountKey: machine.accountKey
                ) { kill in
                    let (events, event) = AsyncStream<Bool>.makeStream()
                    return try await withThrowingTaskGroup(of: WatchedChild.Output.self) { group in
                        for route in routes {
                            group.addTask {
                                defer { event.yield(false) }
                                return try await WatchedChild.run(
                                    ["token", "/r\(route)", "--config", machine.file], environment: machine.environment
                                ) { line in
                                    if line.contains("waiting for it") { event.yield(true) }
                                }
                            }
                        }
                        // Every command has tried the lock and is waiting for the holder (a command that ended
                        // first stops the count, and the assertions below say why).
                        var waiting = 0
                        for await isWaiting in events {
                            guard isWaiting else { break }
                            waiting += 1
                            if waiting == routes.count { break }
                        }
                        #expect(waiting == routes.count)
                        kill()
                        return try await group.reduce(into: [WatchedChild.Output]()) { $0.append($1) }
                    }
                }
                #expect(holder == .signaled(SIGKILL))
                for output in outputs {
                    #expect(output.status == .exited(0), "\(output.stderr)")
                    #expect(!output.stdout.isEmpty)
                    // They had the lock in the end: none went ahead after the bounded wait.
                    #expect(!output.stderr.contains("without the token cache's redemption lock"))
                }
                #expect(provider.refusedRedemptionCount == 0)
                for scope in Self.scopes.prefix(2) {
                    #expect(provider.refreshRedemptionCount(forScope: scope) == 1)
                }
            }
        }
    }

    /// Runs `count` `serve`s of `machine`, each on a port of its own, all healthy before `body` runs with their ports,
    /// and stops them with SIGTERM after it; returns what the body returned and how each serve ended.
    static func serving<T: Sendable>(
        _ machine: Machine, count: Int, healthy: [Int] = [], _ body: (_ ports: [Int]) async throws -> T
    ) async throws -> (T, [ChildProcess.Output]) {
        guard count > 0 else {
            for port in healthy {
                guard try await CommandLineTests.waitUntilHealthy(port: port) else {
                    throw StressProcessError(description: "serve on port \(port) did not become healthy")
                }
            }
            return (try await body(healthy), [])
        }
        let (inner, output) = try await ChildProcess.withListening(
            ["serve", "--config", machine.file, "--listen", "127.0.0.1:0"], environment: machine.environment
        ) { port, running in
            let inner = try await serving(machine, count: count - 1, healthy: healthy + [port], body)
            running.signal(SIGTERM)
            return inner
        }
        return (inner.0, inner.1 + [output])
    }
}
