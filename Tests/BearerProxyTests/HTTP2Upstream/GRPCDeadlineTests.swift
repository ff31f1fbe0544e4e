import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import BearerDataPlane

/// A gRPC call's own deadline (`grpc-timeout`, gRPC's PROTOCOL-HTTP2.md) bounds the proxy's wait for the upstream:
/// an upstream that never answers gets its request abandoned, and the client a DEADLINE_EXCEEDED by the deadline,
/// long before the route's own limit. The client here is a raw HTTP/2 one that keeps no deadline of its own, so the
/// status it reads is the proxy's.
@Suite("gRPC deadlines: grpc-timeout bounds the proxy's wait for an upstream")
struct GRPCDeadlineTests {
    /// A route's limit far beyond the call's deadline: only the deadline can end the wait within a test's time.
    static let routeTimeout = #""timeoutSeconds": 600"#

    /// A unary call's request: its header section and one empty gRPC message (5-byte prefix, length 0).
    static func call(_ path: String, timeout: String) -> (HPACKHeaders, [ByteBuffer]) {
        let headers = HTTP2TestClient.request(
            "POST", path,
            fields: [("content-type", "application/grpc"), ("te", "trailers"), ("grpc-timeout", timeout)])
        return (headers, [ByteBuffer(bytes: [0, 0, 0, 0, 0])])
    }

    @Test("an h2 upstream that never answers: DEADLINE_EXCEEDED, trailers-only; the upstream's stream reset")
    func silentH2Upstream() async throws {
        let upstream = try await FakeHTTP2Upstream.start { _ in .silent }
        do {
            let route =
                #"[{ "prefix": "/pkg.Echo", "upstream": "\#(upstream.baseURL)", "scopes": ["api://echo/.default"], "#
                + #""upstreamProtocol": "h2", \#(Self.routeTimeout) }]"#
            try await ProxyHarness.with(routes: route) { proxy in
                try await HTTP2TestClient.with(port: proxy.port) { client in
                    let (headers, body) = Self.call("/pkg.Echo/Slow", timeout: "300m")
                    let response = try await withTimeout(waitingFor: "the proxy's answer") {
                        try await client.send(headers, body: body)
                    }
                    #expect(response.status == 200)
                    #expect(response.endedWithHead, "trailers-only: one header section ending the stream")
                    #expect(response.header("grpc-status") == "4")
                    #expect(response.header("grpc-message")?.contains("grpc-timeout") == true)
                    // The request went up with the client's deadline unchanged: the server keeps its own too.
                    #expect(upstream.requests.first?.header("grpc-timeout") == "300m")
                    let path = try #require(upstream.requests.first?.path)
                    try await upstream.resets.wait(for: "the upstream stream's reset", timeout: TestLimits.wait) {
                        $0.contains { $0.path == path }
                    }
                    #expect(upstream.resets.read { $0.first } == .init(path: path, code: .cancel))
                }
            }
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }

    @Test("an HTTP/1.1 upstream that never answers: DEADLINE_EXCEEDED; its connection closed, not pooled")
    func silentHTTP1Upstream() async throws {
        try await ProxyHarness.with(upstream: { _ in .silent }, route: Self.routeTimeout) { proxy, upstream in
            try await HTTP2TestClient.with(port: proxy.port) { client in
                let (headers, body) = Self.call("/api/pkg.Echo/Slow", timeout: "300m")
                let response = try await withTimeout(waitingFor: "the proxy's answer") {
                    try await client.send(headers, body: body)
                }
                #expect(response.status == 200)
                #expect(response.header("grpc-status") == "4")
                try await upstream.waitForClosedConnections(1)
                #expect(upstream.requests.first?.head.headers.first(name: "grpc-timeout") == "300m")
            }
        }
    }

    @Test("a malformed grpc-timeout is no deadline for the proxy: passed on as it came, the route's limit applies")
    func malformedPassedOn() async throws {
        let upstream = try await FakeHTTP2Upstream.start { _ in
            .respond(status: 200, fields: [("content-type", "application/grpc")], trailers: [("grpc-status", "0")])
        }
        do {
            let route =
                #"[{ "prefix": "/pkg.Echo", "upstream": "\#(upstream.baseURL)", "scopes": ["api://echo/.default"], "#
                + #""upstreamProtocol": "h2" }]"#
            try await ProxyHarness.with(routes: route) { proxy in
                try await HTTP2TestClient.with(port: proxy.port) { client in
                    let (headers, body) = Self.call("/pkg.Echo/Unary", timeout: "1.5S")
                    let response = try await client.send(headers, body: body)
                    #expect(response.status == 200)
                    #expect(response.trailers?.first(name: "grpc-status") == "0")
                    #expect(upstream.requests.first?.header("grpc-timeout") == "1.5S")
                }
            }
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }
}
