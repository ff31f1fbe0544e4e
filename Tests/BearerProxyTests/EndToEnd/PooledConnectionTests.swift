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

/// A pooled upstream connection goes back to the pool only in a state where it can serve the next request (#21
/// item 2). A response larger than the client channel's write buffer (64 KiB) read in one batch pauses the upstream
/// reads toward the client — and when its end is in the same batch, the connection used to be pooled with its reads
/// still paused: the next request on it, from any client, ran upstream and then waited for the route's timeout.
@Suite("Pooled upstream connections are pooled ready to serve")
struct PooledConnectionTests {
    @Test(
        "after a response large enough to pause upstream reads, the next request on the pooled connection is answered",
        arguments: [100_000, 160_000, 1_000_000])
    func pooledAfterBackpressure(bytes: Int) async throws {
        let big = String(repeating: "b", count: bytes)
        // The route's limit is shortened, so a request stuck on a paused connection shows as 504 instead of a long
        // wait; 20 s leaves room for a machine busy with the whole suite.
        try await RawUpstream.withProxy(
            route: #""timeoutSeconds": 20"#,
            answer: { request in .respond(status: 200, body: request.uri.hasSuffix("/big") ? big : "small") }
        ) { proxy, upstream in
            // One client connection: every exchange runs on its event loop, so each reuses the one pooled connection.
            let client = try await TestConnection.open(port: proxy.port)
            for round in 1...3 {
                let large = try await client.send(uri: "/api/big")
                #expect(large.status == .ok, "round \(round): \(large.status) \(large.bodyText.prefix(300))")
                #expect(large.bodyLength == bytes, "round \(round)")
                let next = try await client.send(uri: "/api/small")
                #expect(next.status == .ok, "round \(round): \(next.status) \(next.bodyText)")
                #expect(next.bodyText == "small", "round \(round)")
            }
            await client.close()
            #expect(upstream.requests.count == 6)
            #expect(upstream.acceptedConnections == 1, "the pooled connection was not reused")
        }
    }
}
