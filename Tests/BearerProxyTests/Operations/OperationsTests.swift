import Foundation
import NIOHTTP1
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

@Suite("Operations: ready, status, metrics, reload, shutdown")
struct OperationsTests {
    @Test("/-/ready flips to 503 when the provider is down and back to 200 when it returns")
    func readiness() async throws {
        let clock = TestClock()
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider),
                    now: { clock.now }
                ) { proxy in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/-/ready").status == .ok)
                    // The token expires; the provider is down.
                    clock.advance(3600)
                    provider.setPersistentFailure(.unavailable)
                    let down = try await TestClient.send(port: proxy.port, uri: "/-/ready")
                    #expect(down.status == .serviceUnavailable)
                    #expect(down.bodyText.contains("api://todo/Read"))
                    // It comes back; once the backoff has passed, ready again.
                    provider.setPersistentFailure(nil)
                    clock.advance(TokenCache.maximumBackoff)
                    #expect(try await TestClient.send(port: proxy.port, uri: "/-/ready").status == .ok)
                }
            }
        }
    }

    @Test("/-/status shows the account and per-route tokens with request counts, and no secret")
    func status() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let environment = TestAccounts.environment(provider)
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: environment
                ) { proxy in
                    for _ in 0..<3 { _ = try await TestClient.send(port: proxy.port, uri: "/api/x") }
                    let response = try await TestClient.send(port: proxy.port, uri: "/-/status")
                    #expect(response.status == .ok)
                    let status = try response.jsonObject()
                    let account = try #require(status["account"] as? [String: Any])
                    #expect(account["flow"] as? String == "refresh-token")
                    let identity = try #require(account["identity"] as? [String: Any])
                    #expect(identity["oid"] as? String == FakeIdentityProvider.User.alice.oid)
                    let routes = try #require(status["routes"] as? [[String: Any]])
                    #expect(routes.first?["requests"] as? Int == 3)
                    let token = try #require(routes.first?["token"] as? [String: Any])
                    #expect(token["cached"] as? Bool == true)
                    let secrets =
                        [environment[TestAccounts.refreshTokenVariable]!]
                        + proxy.proxy.tokens.allTokens.map(\.value)
                        + [proxy.proxy.account.session.snapshot.refreshToken ?? "-"]
                    for secret in secrets {
                        let leaked = response.bodyText.contains(secret)
                        #expect(!leaked, "a secret appeared in /-/status")
                    }
                }
            }
        }
    }

    @Test("/-/status matches bearer-proxy status --json for the same account and state")
    func statusMatchesCommandLine() async throws {
        let state = PersistenceIntegrationTests.temporaryState()
        let root = URL(fileURLWithPath: state.path).deletingLastPathComponent().path
        let file = root + "/routes.json"
        let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:9/x", "scopes": ["api://a/Read"] } ]"#
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try await ProxyHarness.with(routes: routes, stateDirectory: state) { proxy in
            // The same account as the proxy's: for `dev` that includes the issuer, i.e. the listen address.
            try Data(
                #"{ "listen": "127.0.0.1:\#(proxy.port)", "account": { "flow": "dev" }, "routes": \#(routes) }"#.utf8
            ).write(to: URL(fileURLWithPath: file))
            _ = try await proxy.proxy.tokens.accessTokenWithinLimit(for: ScopeSet(["api://a/Read"]))
            proxy.proxy.account.persistence?.flush()
            let endpoint = try await TestClient.send(port: proxy.port, uri: "/-/status").jsonObject()
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_STATE_HOME"] = root
            let cli = try await ChildProcess.run(
                CommandLineTests.binary, ["status", "--json", "--config", file], environment: environment)
            #expect(cli.status == 0, "\(cli.stderr)")
            let command = try #require(
                try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
            #expect(Self.comparable(endpoint) == Self.comparable(command))
        }
    }

    /// The report without what legitimately differs between two moments and two processes.
    static func comparable(_ report: [String: Any]) -> String {
        var copy = report
        copy["routes"] = (report["routes"] as? [[String: Any]])?.map { route in
            var route = route
            route.removeValue(forKey: "requests")
            if var token = route["token"] as? [String: Any] {
                token.removeValue(forKey: "expiresInSeconds")
                route["token"] = token
            }
            return route
        }
        let data = try? JSONSerialization.data(withJSONObject: copy, options: [.sortedKeys])
        return String(decoding: data ?? Data(), as: UTF8.self)
    }

    @Test("/-/metrics parses as Prometheus text (prometheus_client's parser) and its counters move")
    func metrics() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            _ = try await TestClient.send(port: proxy.port, uri: "/api/x")
            let before = try await Self.samples(port: proxy.port)
            for _ in 0..<5 {
                _ = try await TestClient.send(port: proxy.port, method: "POST", uri: "/api/x", body: .text("12345"))
            }
            _ = try await TestClient.send(port: proxy.port, uri: "/nowhere")
            let after = try await Self.samples(port: proxy.port)
            let posts = #"bearer_proxy_requests_total{method="POST",route="/api",status_class="2xx"}"#
            #expect(before[posts] == nil)
            #expect(after[posts] == 5)
            #expect(after[#"bearer_proxy_requests_total{method="GET",route="none",status_class="4xx"}"#] == 1)
            #expect(after[#"bearer_proxy_request_bytes_total{route="/api"}"#] == 25)
            #expect(after[#"bearer_proxy_token_requests_total{flow="dev",outcome="success"}"#] == 1)
            #expect((after[#"bearer_proxy_token_cache_total{result="hit"}"#] ?? 0) >= 5)
            #expect(after[#"bearer_proxy_upstream_duration_seconds_count{route="/api"}"#] == 6)
            #expect((after["bearer_proxy_active_connections{}"] ?? 0) >= 1)
        }
    }

    static func samples(port: Int) async throws -> [String: Double] {
        let response = try await TestClient.send(port: port, uri: "/-/metrics")
        #expect(response.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let parsed = try await Python.run("parse_metrics.py", stdin: response.bodyText)
        #expect(parsed.status == 0, "not valid Prometheus text: \(parsed.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Double]
        return try #require(object)
    }

    @Test("reload with a valid file changes routing without failing any of a stream of concurrent requests")
    func reloadUnderLoad() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let directory = NSTemporaryDirectory() + "bp-reload-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/routes.json"
            func write(_ prefixes: [String]) throws {
                let routes = prefixes.map { route($0, to: upstream, scopes: ["api://a/Read"]) }.joined(separator: ",")
                try Data(#"{ "account": { "flow": "dev" }, "routes": [\#(routes)] }"#.utf8)
                    .write(to: URL(fileURLWithPath: file))
            }
            try write(["/api"])
            try await ProxyHarness.with(routes: "[" + route("/api", to: upstream, scopes: ["api://a/Read"]) + "]") {
                proxy in
                let port = proxy.port
                let statuses = try await withThrowingTaskGroup(of: [UInt].self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            var seen: [UInt] = []
                            for _ in 0..<40 {
                                seen.append(try await TestClient.send(port: port, uri: "/api/x").status.code)
                            }
                            return seen
                        }
                    }
                    try write(["/api", "/new"])
                    #expect(await proxy.proxy.reload(from: file) == .applied(accountChanged: false))
                    var all: [UInt] = []
                    for try await seen in group { all += seen }
                    return all
                }
                #expect(statuses.count == 320)
                #expect(statuses.allSatisfy { $0 == 200 })
                #expect(try await TestClient.send(port: port, uri: "/new/x").status == .ok)
            }
        }
    }

    @Test("reload with an invalid file is refused and the old routes keep serving")
    func reloadInvalid() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, _ in
            let file = NSTemporaryDirectory() + "bp-bad-\(UUID().uuidString).json"
            defer { try? FileManager.default.removeItem(atPath: file) }
            try Data(#"{ "account": { "flow": "dev" }, "routes": [ { "prefix": "nope" } ] }"#.utf8)
                .write(to: URL(fileURLWithPath: file))
            guard case .rejected(let problems) = await proxy.proxy.reload(from: file) else {
                Issue.record("an invalid configuration was applied")
                return
            }
            #expect(problems.contains { $0.contains("routes[0].prefix") })
            #expect(try await TestClient.send(port: proxy.port, uri: "/api/x").status == .ok)
        }
    }

    @Test("shutdown during 200 concurrent slow requests lets every one complete")
    func gracefulShutdownUnderLoad() async throws {
        let slow = SlowUpstream()
        try await withUpstream(slow.behaviour) { upstream in
            let configuration = try TestConfigurations.make(
                routes: "[" + route(to: upstream, scopes: ["api://a/Read"]) + "]")
            // The grace period is what the test is not about: long enough that a machine busy with the whole suite
            // cannot run it out between the shutdown and the upstream's answers (the default 10 s once did).
            var timeouts = ProxyTimeouts()
            timeouts.shutdownGrace = .seconds(50)
            let proxy = try await RunningProxy.start(
                configuration: configuration, stateDirectory: nil, timeouts: timeouts, threads: 2,
                logger: ProxyHarness.silentLogger)
            let port = proxy.server.port
            // Nor is the time 200 requests take to reach the upstream: on a machine busy with the whole suite the
            // first answer's head can wait longer than a client's usual 30 s for the last request to arrive.
            let patience = Duration.seconds(120)
            try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await TestClient.send(port: port, uri: "/api/slow", timeout: patience) }
                }
                try await upstream.waitForRequests(200, timeout: patience)
                // All 200 are in flight, waiting on the upstream. Shut down, then let the upstream answer.
                async let stopped: Void = proxy.shutdownWithinLimit()
                // The listener closes first.
                let refused = try await waitUntilConnectionsRefused(port: port)
                #expect(refused, "the proxy kept accepting connections during shutdown")
                slow.finishAll(with: "data: done\n\n")
                var completed = 0
                for try await response in group where response.status == .ok && response.bodyText == "data: done\n\n" {
                    completed += 1
                }
                #expect(completed == 200)
                try await stopped
            }
        }
    }
}
