import Foundation
import Testing

/// The proxy's memory does not grow with the connections it has served (#24 session 17: every client connection's
/// handler leaked, held by its own ChannelHandlerContext — 1.4–3.2 KiB a connection, unbounded for a long-running
/// serve). A real `serve`, as users run it, and a client that opens a new connection for each request.
@Suite("Memory: a serve's footprint stays flat over thousands of connections")
struct ConnectionMemoryTests {
    /// VmRSS of `pid`, in KiB (procfs: Linux, where the proxy runs).
    static func residentKiB(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// Runs `serve` with `arguments` as users run it, `warmUp` (pools, caches and the allocator's arenas reach their
    /// working size), then `load`: its VmRSS must grow by less than `limitKiB` over the load; then it must stop
    /// cleanly on SIGTERM.
    static func expectFlat(
        serving arguments: [String], environment: [String: String], limitKiB: Int, over what: String,
        warmUp: (_ port: Int) async throws -> Void, load: (_ port: Int) async throws -> Void
    ) async throws {
        let (_, output) = try await ChildProcess.withListening(arguments, environment: environment) {
            port, running in
            #expect(try await CommandLineTests.waitUntilHealthy(port: port))
            try await warmUp(port)
            let before = try Self.residentKiB(running.processIdentifier)
            try await load(port)
            let after = try Self.residentKiB(running.processIdentifier)
            #expect(after - before < limitKiB, "VmRSS \(before) KiB → \(after) KiB over \(what)")
            running.signal(SIGTERM)
        }
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// `count` requests, each on a connection of its own (curl's URL globbing; `Connection: close`).
    static func connections(_ count: Int, port: Int) async throws {
        let result = try await ChildProcess.run(
            "curl", ["-sS", "-H", "Connection: close", "http://127.0.0.1:\(port)/-/health?n=[1-\(count)]"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "\"ok\"").count - 1 == count, "every request answered")
    }

    @Test("10,000 connections after a warm-up of 2,000: resident memory grows by less than 4 MiB")
    func flatOverConnections() async throws {
        let state = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let arguments = [
            "serve", "--config", CommandLineTests.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:0",
            "--threads", "1",
        ]
        try await Self.expectFlat(
            serving: arguments, environment: ["XDG_STATE_HOME": state], limitKiB: 4 * 1024,
            // A leak of even 1 KiB a connection is 10 MiB here.
            over: "10,000 connections", warmUp: { try await Self.connections(2_000, port: $0) },
            load: { try await Self.connections(10_000, port: $0) })
    }

    /// `count` WebSocket tunnels through the proxy, each a new connection both ways (Tests/python/websocket_churn.py).
    static func tunnels(_ count: Int, url: String) async throws {
        let result = try await Python.run("websocket_churn.py", [url, String(count)])
        try #require(result.status == 0, "websocket_churn.py failed: \(result.stderr)")
        #expect(result.stdout.contains("\"echoed\": \(count)"), "\(result.stdout)")
    }

    @Test("2,500 WebSocket tunnels after a warm-up of 500: resident memory grows by less than 2 MiB")
    func flatOverTunnels() async throws {
        try await FakeWebSocketUpstream.with { upstream in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/routes.json"
            let routes = WebSocketTests.route(to: upstream)
            let json = #"{ "listen": "127.0.0.1:0", "account": { "flow": "dev" }, "routes": \#(routes) }"#
            try Data(json.utf8).write(to: URL(fileURLWithPath: config))
            func url(_ port: Int) -> String { "ws://127.0.0.1:\(port)/api/socket" }
            try await Self.expectFlat(
                serving: ["serve", "--config", config, "--threads", "1"], environment: ["XDG_STATE_HOME": directory],
                limitKiB: 2 * 1024,
                // The handler leak cost a tunnel 1.4 KiB in a release build (more in a debug one): 3.4 MiB here.
                over: "2,500 tunnels", warmUp: { try await Self.tunnels(500, url: url($0)) },
                load: { try await Self.tunnels(2_500, url: url($0)) })
        }
    }
}
