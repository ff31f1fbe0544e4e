import Foundation
import Testing

@testable import BearerDataPlane

/// 100 MiB each way as gRPC streams of 1 MiB messages (Tests/python/grpc_bulk.py against grpc_echo_server.py), through
/// an h2 route: every byte arrives, in order, checked by SHA-256 at both ends. Bytes and digests only: how fast, and
/// how much memory the proxy held, bench/grpc-bulk.sh measures (docs/benchmarks.md).
@Suite("gRPC: 100 MiB up and 100 MiB down through the proxy, digests end to end")
struct GRPCBulkTests {
    struct Outcome: Decodable {
        struct Up: Decodable { var server: String }
        struct Down: Decodable {
            var client: String
            var server: String
        }
        var expected: String
        var up: Up
        var down: Down
    }

    @Test("client streaming 100 MiB up, server streaming 100 MiB down: the digests agree")
    func hundredMiBEachWay() async throws {
        try await GRPCCancellationTests.withEchoServer { proxyPort, _ in
            let result = try await Python.run("grpc_bulk.py", [String(proxyPort), "pkg.Echo", "100"])
            try #require(result.status == 0, "grpc_bulk.py failed: \(result.stderr)")
            let outcome = try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
            #expect(outcome.expected.hasPrefix("\(100 << 20) "))
            #expect(outcome.up.server == outcome.expected, "what the server received")
            #expect(outcome.down.server == outcome.expected, "what the server sent")
            #expect(outcome.down.client == outcome.expected, "what the client received")
        }
    }
}
