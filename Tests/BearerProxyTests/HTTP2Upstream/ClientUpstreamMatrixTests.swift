import Foundation
import NIOCore
import Testing

@testable import BearerDataPlane

/// Clients nobody here wrote — curl over HTTP/1.1, curl and nghttp over HTTP/2 with prior knowledge — through the
/// proxy to each kind of upstream: HTTP/1.1 (Go's net/http in the clear), h2 in the clear (`h2`, a NIOHTTP2 server)
/// and h2 over TLS picked by ALPN (`auto`, Go's net/http). Every upstream answers only a request whose stream carries
/// a bearer token, and says what it saw; nghttp sends two streams on its one connection.
@Suite("Client × upstream: curl and nghttp through the proxy to HTTP/1.1, h2c and h2 over TLS")
struct ClientUpstreamMatrixTests {
    enum Client: String, CaseIterable, Sendable {
        case curlHTTP1 = "curl --http1.1"
        case curlHTTP2 = "curl --http2-prior-knowledge"
        case nghttp
    }

    enum Upstream: String, CaseIterable, Sendable {
        case http1 = "HTTP/1.1 (Go, clear)"
        case h2c = "h2 (NIOHTTP2, clear)"
        case tlsAuto = "auto over TLS (Go, ALPN h2)"

        /// The protocol the upstream says it saw.
        var proto: String { self == .http1 ? "HTTP/1.1" : "HTTP/2.0" }
    }

    /// Runs `body` with the proxy's port, its route `/api` going to `upstream`.
    static func with(_ upstream: Upstream, _ body: (_ proxyPort: Int) async throws -> Void) async throws {
        switch upstream {
        case .h2c:
            let server = try await FakeHTTP2Upstream.start { request in
                guard request.header("authorization")?.hasPrefix("Bearer ") == true else {
                    return .respond(status: 401)
                }
                let method = request.header(":method") ?? ""
                return .respond(
                    status: 200, fields: [("x-proto", "HTTP/2.0")],
                    body: ByteBuffer(string: "\(method) \(request.path) \(request.bodyLength)"))
            }
            do {
                let routes = HTTP2UpstreamTests.route(to: server.baseURL, version: "h2", tls: false)
                try await ProxyHarness.with(routes: routes) { try await body($0.port) }
            } catch {
                try? await server.shutdown()
                throw error
            }
            try await server.shutdown()
        case .http1, .tlsAuto:
            let tls = upstream == .tlsAuto
            let arguments =
                tls ? ["-cert", TLSFixtures.serverCertificateFile, "-key", TLSFixtures.serverKeyFile] : ["-plain"]
            _ = try await ChildProcess.withListening(executable: try await GoHTTP2Server.binary(), arguments) {
                port, running in
                defer { running.signal(SIGKILL) }
                let routes = HTTP2UpstreamTests.route(
                    to: "\(tls ? "https" : "http")://127.0.0.1:\(port)", version: tls ? "auto" : "http/1.1", tls: tls)
                try await ProxyHarness.with(routes: routes) { try await body($0.port) }
            }
        }
    }

    @Test(
        "the answer comes back, the token was on every upstream stream, in the upstream's own protocol",
        arguments: Client.allCases, Upstream.allCases)
    func matrix(client: Client, upstream: Upstream) async throws {
        try await Self.with(upstream) { port in
            let url = "http://127.0.0.1:\(port)/api/matrix"
            switch client {
            case .curlHTTP1, .curlHTTP2:
                let version = client == .curlHTTP1 ? "--http1.1" : "--http2-prior-knowledge"
                let result = try await ChildProcess.run(
                    "/usr/bin/curl", ["-s", "-D", "-", version, "-w", "\n%{http_version} %{http_code}", url])
                #expect(result.stdout.hasSuffix("\n\(client == .curlHTTP1 ? "1.1" : "2") 200"), "\(result.stdout)")
                #expect(result.stdout.contains("GET /base/matrix 0"), "\(result.stdout)")
                #expect(result.stdout.lowercased().contains("x-proto: \(upstream.proto.lowercased())"))
            case .nghttp:
                let nghttp = try HTTP2ClientTests.tool("nghttp")
                let result = try await ChildProcess.run(nghttp, ["-v", url, url + "/again"])
                #expect(result.status == 0, "nghttp: \(result.stderr)")
                #expect(result.stdout.components(separatedBy: ":status: 200").count == 3, "\(result.stdout)")
                #expect(result.stdout.contains("GET /base/matrix 0"), "\(result.stdout)")
                #expect(result.stdout.contains("GET /base/matrix/again 0"), "\(result.stdout)")
                #expect(result.stdout.contains("x-proto: \(upstream.proto)"), "\(result.stdout)")
            }
        }
    }
}
