import Foundation
import Subprocess
import Testing

@testable import BearerProxy

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

    /// A `refresh-token` account with routes `/r0` and `/r1` (one scope set each) to `upstream`'s `/r0` and `/r1`.
    static func machine(_ provider: FakeIdentityProvider, upstream: FakeUpstream) throws -> Machine {
        let directory = try CommandLineTests.temporaryDirectory()
        let file = directory + "/routes.json"
        let account = TestAccounts.refreshToken(provider)
        let routes =
            "["
            + (0..<2).map { index in
                #"{ "prefix": "/r\#(index)", "upstream": "\#(upstream.baseURL)/r\#(index)", "#
                    + #""scopes": ["\#(SharedRefreshTokenTests.scopes[index])"] }"#
            }.joined(separator: ", ") + "]"
        try Data(#"{ "account": \#(account), "routes": \#(routes) }"#.utf8).write(to: URL(fileURLWithPath: file))
        let environment = InteractiveCommandLineTests.environment(
            state: directory + "/state", [TestAccounts.refreshTokenVariable: provider.issueRefreshToken(for: .alice)])
        let configuration = try TestConfigurations.make(routes: routes, account: account, environment: environment)
        return Machine(
            file: file, environment: environment, state: StateDirectory(path: directory + "/state/bearer-proxy"),
            accountKey: AccountRuntime.accountKey(for: configuration.account.settings, devIssuerURL: ""))
    }

    /// What one process or request of the burst ended with.
    enum Outcome: Sendable {
        case response(route: Int, status: UInt)
        case command(route: Int, status: Int32, stdout: String, stderr: String)
    }

    @Test("two serves and four token commands at once: every answer 200, one refresh request per scope set")
    func burst() async throws {
        try await withIdentityProvider(SharedRefreshTokenTests.strictProvider()) { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let machine = try Self.machine(provider, upstream: upstream)
                let ports = [try await closedPort(), try await closedPort()]
                let (outcomes, serves) = try await Self.serving(machine, on: ports) {
                    try await withThrowingTaskGroup(of: Outcome.self) { group in
                        for route in 0..<2 {
                            for port in ports {
                                for _ in 0..<10 {
                                    group.addTask {
                                        let response = try await TestClient.send(port: port, uri: "/r\(route)/x")
                                        return .response(route: route, status: response.status.code)
                                    }
                                }
                            }
                            for _ in 0..<2 {
                                group.addTask {
                                    let result = try await CommandLineTests.run(
                                        ["token", "/r\(route)", "--config", machine.file],
                                        environment: machine.environment)
                                    return .command(
                                        route: route, status: result.status, stdout: result.stdout,
                                        stderr: result.stderr)
                                }
                            }
                        }
                        return try await group.reduce(into: [Outcome]()) { $0.append($1) }
                    }
                }
                var tokens: [Int: Set<String>] = [:]
                for outcome in outcomes {
                    switch outcome {
                    case .response(let route, let status):
                        #expect(status == 200, "route \(route)")
                    case .command(let route, let status, let stdout, let stderr):
                        #expect(status == 0, "\(stderr)")
                        #expect(!stderr.contains("invalid_grant"))
                        tokens[route, default: []].insert(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                }
                for request in upstream.requests {
                    let route = request.head.uri.hasPrefix("/r0") ? 0 : 1
                    tokens[route, default: []].insert(String(request.head.header("authorization")?.dropFirst(7) ?? ""))
                }
                for serve in serves {
                    #expect(serve.status == 0, "\(serve.stderr)")
                    #expect(!serve.stderr.contains("invalid_grant"))
                }
                #expect(provider.refusedRedemptionCount == 0)
                for route in 0..<2 {
                    // One token per scope set on the whole machine: the commands printed the one the serves sent.
                    #expect(tokens[route]?.count == 1, "route \(route)")
                    #expect(provider.refreshRedemptionCount(forScope: SharedRefreshTokenTests.scopes[route]) == 1)
                }
            }
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
                for scope in SharedRefreshTokenTests.scopes.prefix(2) {
                    #expect(provider.refreshRedemptionCount(forScope: scope) == 1)
                }
            }
        }
    }

    /// Runs two `serve`s of `machine` on `ports`, healthy before `body` runs, and stops them with SIGTERM after it;
    /// returns what the body returned and how each serve ended.
    static func serving<T: Sendable>(
        _ machine: Machine, on ports: [Int], _ body: () async throws -> T
    ) async throws -> (T, [ChildProcess.Output]) {
        func serve(_ port: Int) -> [String] {
            ["serve", "--config", machine.file, "--listen", "127.0.0.1:\(port)"]
        }
        let (inner, outer) = try await ChildProcess.withRunning(
            CommandLineTests.binary, serve(ports[0]), environment: machine.environment
        ) { first in
            let (value, second) = try await ChildProcess.withRunning(
                CommandLineTests.binary, serve(ports[1]), environment: machine.environment
            ) { second in
                for port in ports {
                    guard try await CommandLineTests.waitUntilHealthy(port: port) else {
                        throw StressProcessError(description: "serve on port \(port) did not become healthy")
                    }
                }
                let value = try await body()
                second.signal(SIGTERM)
                return value
            }
            first.signal(SIGTERM)
            return (value, second)
        }
        return (inner.0, [outer, inner.1])
    }
}
