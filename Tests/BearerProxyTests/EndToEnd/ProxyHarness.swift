import Foundation
import Logging
import NIOCore
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

/// A real proxy on 127.0.0.1:0, started through ``RunningProxy`` exactly as `bearer-proxy serve` starts it, with
/// its keys in memory (`--no-persist`).
struct ProxyHarness {
    let proxy: RunningProxy

    var port: Int { proxy.server.port }

    /// Runs `body` against a proxy serving `routes` (a JSON array), then shuts the proxy down.
    static func with<T>(
        routes: String, extra: String = "", account: String = #"{ "flow": "dev" }"#,
        environment: [String: String] = [:], stateDirectory: StateDirectory? = nil,
        timeouts: ProxyTimeouts = ProxyTimeouts(), logger: Logger = ProxyHarness.silentLogger,
        now: @escaping @Sendable () -> Date = { Date() }, maximumConnections: Int? = nil,
        peerLookup: PeerUserPolicy.Lookup = .kernel, threads: Int = 2,
        _ body: (ProxyHarness) async throws -> T
    ) async throws -> T {
        DescriptorLimit.raised
        let configuration = try TestConfigurations.make(
            routes: routes, extra: extra, account: account, environment: environment)
        let proxy = try await RunningProxy.start(
            configuration: configuration, stateDirectory: stateDirectory, environment: environment,
            timeouts: timeouts, maximumConnections: maximumConnections, threads: threads, logger: logger, now: now,
            peerLookup: peerLookup)
        let harness = ProxyHarness(proxy: proxy)
        do {
            let result = try await body(harness)
            try await proxy.shutdownWithinLimit()
            return result
        } catch {
            try? await proxy.shutdownWithinLimit()
            throw error
        }
    }

    /// Runs `body` with a fake upstream and a proxy whose route `/api` (scopes `api://api/Read`) points at it.
    static let silentLogger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func with<T>(
        upstream behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour, tls: Bool = false,
        route extra: String = "", configuration topLevel: String = "", environment: [String: String] = [:],
        timeouts: ProxyTimeouts = ProxyTimeouts(), logger: Logger = ProxyHarness.silentLogger,
        _ body: (ProxyHarness, FakeUpstream) async throws -> T
    ) async throws -> T {
        let upstream = try await FakeUpstream.start(tls: tls, behaviour: behaviour)
        do {
            let route =
                #"{ "prefix": "/api", "upstream": "\#(upstream.baseURL)/base", "scopes": ["api://api/Read"]"#
                + (extra.isEmpty ? "" : ", " + extra) + " }"
            let result = try await with(
                routes: "[\(route)]", extra: topLevel, environment: environment, timeouts: timeouts, logger: logger
            ) { try await body($0, upstream) }
            try await upstream.shutdown()
            return result
        } catch {
            try? await upstream.shutdown()
            throw error
        }
    }
}

extension RunningProxy {
    /// ``RunningProxy/shutdown()`` as the tests call it: a shutdown that has not ended after ``TestLimits/wait``
    /// fails the test with `TestSupportError.timedOut` instead of hanging the suite.
    func shutdownWithinLimit() async throws {
        try await withTimeout(waitingFor: "the proxy to shut down") { try await self.shutdown() }
    }
}

/// Decodes a JWT's claims (no verification: the tests that need verification use an independent library).
func jwtClaims(_ authorization: String?) throws -> [String: Any] {
    let value = try #require(authorization)
    #expect(value.hasPrefix("Bearer "))
    let segments = value.dropFirst("Bearer ".count).split(separator: ".")
    try #require(segments.count == 3)
    let payload = try #require(Base64URL.decode(segments[1]))
    let object = try JSONSerialization.jsonObject(with: payload)
    return try #require(object as? [String: Any])
}

/// Runs `body` with a fake upstream, shutting it down afterwards whatever happens.
func withUpstream<T>(
    tls: Bool = false, host: String = "127.0.0.1",
    _ behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour,
    _ body: (FakeUpstream) async throws -> T
) async throws -> T {
    let upstream = try await FakeUpstream.start(tls: tls, host: host, behaviour: behaviour)
    do {
        let result = try await body(upstream)
        try await upstream.shutdown()
        return result
    } catch {
        try? await upstream.shutdown()
        throw error
    }
}

/// Polls (bounded: about 2 s) until a new connection to `port` is refused — a shutting-down proxy closes its
/// listener before it drains. Returns false if it kept accepting.
func waitUntilConnectionsRefused(port: Int) async throws -> Bool {
    for _ in 0..<200 {
        do {
            _ = try await TestClient.send(port: port, uri: "/-/health", timeout: .seconds(1))
            try await Task.sleep(for: .milliseconds(10))
        } catch {
            return true
        }
    }
    return false
}
