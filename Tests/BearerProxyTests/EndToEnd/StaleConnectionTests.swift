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

@Suite("End to end: a pooled connection the upstream has dropped")
struct StaleConnectionTests {
    /// The upstream answers the first request, then closes the (pooled, reused) connection on the second without
    /// answering — the race a keep-alive proxy meets when an upstream times out an idle connection — and answers
    /// everything after that normally.
    static func flakySecondRequest() -> @Sendable (RequestHead) -> UpstreamBehaviour {
        let count = Atomic<Int>(0)
        return { _ in
            count.add(1, ordering: .relaxed).newValue == 2 ? .closeImmediately : .echo
        }
    }

    @Test("an idempotent request without a body is replayed once on a new connection")
    func replaysIdempotentRequest() async throws {
        try await ProxyHarness.with(upstream: Self.flakySecondRequest()) { proxy, upstream in
            // One client connection, so both requests run on the same event loop and hence the same pool.
            let client = try await TestConnection.open(port: proxy.port)
            let first = try await client.send(uri: "/api/one")
            #expect(first.status == .ok)
            let second = try await client.send(uri: "/api/two")
            await client.close()
            #expect(second.status == .ok, "\(second.bodyText)")
            #expect(try second.echo().uri == "/base/two")
            // The upstream saw /two twice: on the reused connection, then on a new one.
            #expect(upstream.requests.map(\.head.uri) == ["/base/one", "/base/two", "/base/two"])
            #expect(upstream.acceptedConnections == 2)
        }
    }

    @Test("a POST is never replayed: the client gets 502")
    func doesNotReplayPost() async throws {
        try await ProxyHarness.with(upstream: Self.flakySecondRequest()) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let first = try await client.send(uri: "/api/one")
            #expect(first.status == .ok)
            let second = try await client.send(method: "POST", uri: "/api/two", body: .text("x"))
            await client.close()
            #expect(second.status == .badGateway)
            #expect(upstream.requests.filter { $0.head.method == "POST" }.count == 1)
        }
    }
}
