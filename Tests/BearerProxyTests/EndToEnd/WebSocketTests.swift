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

/// WebSocket through the proxy (SPEC §8): NIOWebSocket as the upstream, Python's `websockets` as the client.
@Suite("End to end: WebSocket tunnels")
struct WebSocketTests {
    /// Runs the Python client's script against `url` and returns what it printed, decoded.
    static func client(_ url: String, origin: String? = nil) async throws -> [String: Any] {
        try await client(arguments: [url] + (origin.map { [$0] } ?? []))
    }

    static func client(arguments: [String]) async throws -> [String: Any] {
        let result = try await Python.run("websocket_client.py", arguments)
        try #require(result.status == 0, "websocket_client.py failed: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any])
    }

    static func route(to upstream: FakeWebSocketUpstream) -> String {
        let tls = upstream.tls ? #", "tls": { "caFile": "\#(TLSFixtures.caFile)" }"# : ""
        return
            #"[ { "prefix": "/api", "upstream": "\#(upstream.baseURL)/base", "scopes": ["api://api/Read"]\#(tls) } ]"#
    }

    /// The answers of a complete, successful script.
    static func expectFullScript(_ result: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result["echo"] as? String == "hello", sourceLocation: sourceLocation)
        #expect(
            result["whoami"] as? String == "authorized", "no token at the handshake", sourceLocation: sourceLocation)
        #expect(result["big"] as? Bool == true, "the 10 MiB message came back altered", sourceLocation: sourceLocation)
        #expect(result["ordered"] as? Bool == true, "1,000 messages out of order", sourceLocation: sourceLocation)
        #expect(result["ping"] as? String == "pong-received", sourceLocation: sourceLocation)
        #expect(result["close_code"] as? Int == 1000, sourceLocation: sourceLocation)
    }

    @Test(
        "echo, the route's token at the handshake, 10 MiB, 1,000 in order, a server ping, the close handshake",
        arguments: [false, true])
    func tunnel(tls: Bool) async throws {
        let log = CapturingLogHandler.Store()
        try await FakeWebSocketUpstream.with(tls: tls) { upstream in
            try await ProxyHarness.with(
                routes: Self.route(to: upstream), logger: CapturingLogHandler.logger(into: log)
            ) { proxy in
                Self.expectFullScript(try await Self.client("ws://127.0.0.1:\(proxy.port)/api/socket?x=1"))
                #expect(upstream.handshakes.map(\.uri) == ["/base/socket?x=1"])
                // The tunnel's one access-log line, with the bytes each way, once both connections have closed.
                var line: String?
                for _ in 0..<200 where line == nil {
                    line = log.all.first { $0.hasPrefix("info request") && $0.contains(#""status": 101"#) }
                    if line == nil { try await Task.sleep(for: .milliseconds(25)) }
                }
                let logged = try #require(line, "no access-log line for the tunnel")
                #expect(logged.contains(#""route": /api"#))
                for direction in ["bytes-in", "bytes-out"] {
                    let bytes = logged.firstRange(of: #""\#(direction)": "#).map {
                        logged[$0.upperBound...].prefix { $0.isNumber }
                    }
                    #expect(Int(bytes ?? "") ?? 0 > 10 << 20, "the tunnel's \(direction) were not counted")
                }
            }
        }
    }

    @Test(
        "a tunnel with no byte either way for its idle limit is closed at both ends: the route's, else the connection's",
        arguments: [true, false])
    func idleTunnel(routeSetsIt: Bool) async throws {
        var timeouts = ProxyTimeouts()
        if !routeSetsIt { timeouts.clientIdle = .milliseconds(500) }
        try await FakeWebSocketUpstream.with { upstream in
            var routes = Self.route(to: upstream)
            if routeSetsIt {
                routes = routes.replacingOccurrences(of: #""scopes""#, with: #""idleTimeoutSeconds": 0.5, "scopes""#)
            }
            try await ProxyHarness.with(routes: routes, timeouts: timeouts) { proxy in
                let result = try await Self.client(arguments: ["--idle", "ws://127.0.0.1:\(proxy.port)/api/socket"])
                #expect(result["ended"] as? String == "closed")
                // No close frame: the proxy ends the TCP connections, it does not speak WebSocket.
                #expect(result["close_code"] is NSNull)
            }
        }
    }

    @Test("a cross-site Origin is refused before the upstream is contacted")
    func crossSiteOrigin() async throws {
        try await FakeWebSocketUpstream.with { upstream in
            try await ProxyHarness.with(routes: Self.route(to: upstream)) { proxy in
                let result = try await Self.client(
                    "ws://127.0.0.1:\(proxy.port)/api/socket", origin: "https://evil.example")
                #expect(result["refused"] as? Int == 403)
                #expect(upstream.acceptedConnections == 0)
                #expect(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://api/Read"])) == nil)
            }
        }
    }

    @Test("a handshake the upstream refuses passes through with its status and body")
    func refusedHandshake() async throws {
        try await FakeWebSocketUpstream.with { upstream in
            try await ProxyHarness.with(routes: Self.route(to: upstream)) { proxy in
                let result = try await Self.client("ws://127.0.0.1:\(proxy.port)/api/refuse")
                #expect(result["refused"] as? Int == 403)
                #expect(result["body"] as? String == "no websocket here")
                #expect(upstream.handshakes.map(\.bearer) == [true])
            }
        }
    }

    @Test("another upgrade token is stripped: proxied as HTTP/1.1, and the connection closes after it")
    func otherUpgradeStripped() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let responses = try await TestClient.raw(
                port: proxy.port,
                text: "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                    + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
                expectedResponses: 2)
            #expect(responses.count == 1, "a second response on a connection that should have closed")
            #expect(responses.first?.status == .ok)
            #expect(responses.first?.header("connection") == "close")
            let echoed = try #require(try responses.first?.echo())
            #expect(echoed.header("upgrade") == nil)
            #expect(echoed.header("http2-settings") == nil)
            #expect(upstream.requests.count == 1)
        }
    }

    @Test("through the real binary: serve tunnels the whole script")
    func realBinary() async throws {
        try await FakeWebSocketUpstream.with { upstream in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let config = directory + "/routes.json"
            let json =
                #"{ "listen": "127.0.0.1:0", "account": { "flow": "dev" }, "routes": \#(Self.route(to: upstream)) }"#
            try Data(json.utf8).write(to: URL(fileURLWithPath: config))
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_STATE_HOME"] = directory
            let (_, output) = try await ChildProcess.withListening(
                ["serve", "--config", config], environment: environment
            ) { port, running in
                #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                Self.expectFullScript(try await Self.client("ws://127.0.0.1:\(port)/api/socket"))
                running.signal(SIGTERM)
            }
            #expect(output.status == 0, "\(output.stderr)")
        }
    }
}
