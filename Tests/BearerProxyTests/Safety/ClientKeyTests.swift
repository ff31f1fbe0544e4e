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

@Suite("Security: the client key and who may listen where")
struct ClientKeyTests {
    static let key = "correct-horse-battery-staple-4f1c"
    static let environment = ["BEARER_PROXY_KEY": key]

    static func withKeyedProxy(_ body: (ProxyHarness, FakeUpstream) async throws -> Void) async throws {
        try await ProxyHarness.with(
            upstream: { _ in .echo }, configuration: #""requireKey": true"#, environment: environment, body)
    }

    @Test(
        "without the right key: 401, and neither upstream nor token provider is reached",
        arguments: [
            [], [("X-Bearer-Proxy-Key", "wrong")], [("Proxy-Authorization", "Bearer wrong")],
            [("Proxy-Authorization", "Basic " + key)], [("X-Bearer-Proxy-Key", key + "x")],
            [("Authorization", "Bearer " + key)],
        ])
    func refused(_ headers: [(String, String)]) async throws {
        try await Self.withKeyedProxy { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x", headers: headers)
            #expect(response.status == .unauthorized)
            #expect(response.header("www-authenticate") == #"Bearer realm="bearer-proxy""#)
            #expect(upstream.requests.isEmpty)
            #expect(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://api/Read"])) == nil)
            #expect(!response.bodyText.contains(Self.key))
        }
    }

    @Test(
        "with the key, in either header: forwarded, and the key never reaches the upstream",
        arguments: [("X-Bearer-Proxy-Key", key), ("Proxy-Authorization", "Bearer " + key)])
    func accepted(_ name: String, _ value: String) async throws {
        try await Self.withKeyedProxy { proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/x", headers: [(name, value)])
            #expect(response.status == .ok)
            #expect(!response.bodyText.contains(Self.key))
            let received = try #require(upstream.requests.first)
            #expect(received.head.header("x-bearer-proxy-key") == nil)
            #expect(received.head.header("proxy-authorization") == nil)
            #expect(try jwtClaims(received.head.header("authorization"))["aud"] as? String == "api://api")
        }
    }

    @Test("liveness (/-/health) answers without the key, so a probe needs no secret")
    func healthWithoutKey() async throws {
        try await Self.withKeyedProxy { proxy, _ in
            let health = try await TestClient.send(port: proxy.port, uri: "/-/health")
            #expect(health.status == .ok)
            let keys = try await TestClient.send(port: proxy.port, uri: "/-/jwks.json")
            #expect(keys.status == .unauthorized)
        }
    }

    @Test("a non-loopback listen without a key or allowRemote is refused at start-up")
    func remoteWithoutKeyRefused() async throws {
        let configuration = try TestConfigurations.make(
            routes: #"[ { "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"] } ]"#)
        await #expect {
            _ = try await RunningProxy.start(
                configuration: configuration, listeners: [.tcp(ListenAddress(host: "0.0.0.0", port: 0))],
                stateDirectory: nil,
                logger: ProxyHarness.silentLogger)
        } throws: { error in
            guard case StartupError.remoteWithoutKey = error else { return false }
            return "\(error)".contains("BEARER_PROXY_KEY") && "\(error)".contains("allowRemote")
        }
    }

    @Test("a non-loopback listen with a key requires it; with allowRemote it starts and warns")
    func remoteWithKeyOrAllowRemote() async throws {
        let routes = #"[ { "prefix": "/a", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/R"] } ]"#
        let store = CapturingLogHandler.Store()
        let keyed = try await RunningProxy.start(
            configuration: try TestConfigurations.make(routes: routes),
            listeners: [.tcp(ListenAddress(host: "0.0.0.0", port: 0))], stateDirectory: nil,
            environment: Self.environment,
            logger: CapturingLogHandler.logger(into: store))
        let port = keyed.server.port
        let without = try await TestClient.send(port: port, uri: "/a/x")
        #expect(without.status == .unauthorized)
        try await keyed.shutdownWithinLimit()

        let open = try await RunningProxy.start(
            configuration: try TestConfigurations.make(routes: routes, extra: #""allowRemote": true"#),
            listeners: [.tcp(ListenAddress(host: "0.0.0.0", port: 0))], stateDirectory: nil,
            logger: CapturingLogHandler.logger(into: store))
        try await open.shutdownWithinLimit()
        #expect(store.all.filter { $0.hasPrefix("warning") && $0.contains("non-loopback") }.count == 2)
        #expect(!store.all.joined().contains(Self.key))
    }

    @Test("the key comparison is exact")
    func keyComparison() {
        let key = ClientKey("abc")
        #expect(key.matches("abc"))
        #expect(!key.matches("abd"))
        #expect(!key.matches("ab"))
        #expect(!key.matches("abcd"))
        #expect(!key.matches(""))
        #expect(!"\(key)".contains("abc"))
    }
}
