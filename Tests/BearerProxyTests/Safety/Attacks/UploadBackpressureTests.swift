import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import BearerDataPlane

/// A hostile client against the request body's backpressure (SPEC §8: bodies stream, never buffered whole): it
/// uploads as fast as its socket allows to an upstream that accepts the connection and reads nothing. The proxy must
/// stop reading the client once the upstream connection cannot take more, so what the client gets rid of is bounded
/// by the sockets' buffers on the way, not by the body's size. A proxy that kept reading would take the whole
/// body into memory (#24 session 19: the read gate's question to the upstream is asked lazily now). And the upstream
/// that takes nothing is bounded too: after the body-stall limit the exchange ends (504, or the connection closed),
/// instead of both connections staying pinned for as long as the upstream keeps its socket open.
@Suite("Security: an upload to an upstream that reads nothing stops at the sockets' buffers")
struct UploadBackpressureTests {
    /// An upstream that accepts connections and never reads from them (no `read()` is ever issued).
    static func withDeafUpstream<T>(_ body: (Int) async throws -> T) async throws -> T {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            let result = try await body(try #require(server.localAddress?.port))
            try await server.close()
            return result
        } catch {
            try? await server.close()
            throw error
        }
    }

    @Test("1 GiB at an upstream that never reads: the client is held back before 64 MiB, ended at the stall limit")
    func deafUpstream() async throws {
        let limit = 1 << 30
        let bound = 64 << 20
        var timeouts = ProxyTimeouts()
        timeouts.bodyStall = .seconds(5)
        try await Self.withDeafUpstream { port in
            let route = #"{ "prefix": "/api", "upstream": "http://127.0.0.1:\#(port)", "scopes": ["api://api/Read"] }"#
            try await ProxyHarness.with(routes: "[\(route)]", timeouts: timeouts) { proxy in
                let result = try await Python.run(
                    "flooding_uploader.py", [String(proxy.port), String(limit), "1", "30"])
                try #require(result.status == 0, "flooding_uploader.py failed: \(result.stderr)")
                let report = try #require(
                    try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
                let sent = try #require(report["sent"] as? Int)
                #expect(report["stalled"] as? Bool == true, "the proxy kept reading: \(sent) bytes taken")
                #expect(sent < bound, "the proxy took \(sent) bytes of a body its upstream never read")
                #expect(sent > 0)
                // The client keeps pushing whatever the socket takes, so no stall is its own; the body-stall limit
                // (5 s) ends the exchange well within its 30 s wait: a 504, or a reset that discarded it (the proxy
                // closes with the client's unread body bytes in its socket).
                #expect(report["ended"] as? Bool == true, "the exchange was still open 30 s after the stall: \(report)")
                if let status = report["status_line"] as? String {
                    #expect(status.hasPrefix("HTTP/1.1 504"), "\(report)")
                }
            }
        }
    }
}
