import Foundation
import NIOCore
import Testing

@testable import BearerDataPlane

/// Go's own HTTP/2 client (golang.org/x/net/http2, `Tests/upstreams/go-h2-client`), a client nobody on the project
/// wrote, with prior knowledge on the proxy's TCP listener (RFC 9113 §3.3). Twenty GETs and a 1 MiB POST at once, then
/// one more GET: every answer must come back over HTTP/2 on the one connection Go dialled, every upstream request
/// must carry the route's token (the upstream refuses one without), and the upload's SHA-256 must come back.
@Suite("HTTP/2 clients: Go's x/net/http2 with prior knowledge, to HTTP/1.1 and h2c upstreams")
struct GoHTTP2ClientTests {
    /// What `go-h2-client` prints.
    struct Summary: Decodable {
        struct Exchange: Decodable, CustomStringConvertible {
            var method: String
            var path: String
            var status: Int
            var proto: String
            var bytes: Int
            var error: String?
            var description: String { "\(method) \(path): \(status) \(proto) \(error ?? "")" }
        }

        var dials: Int
        var connections: [String]?
        var exchanges: [Exchange]
        var uploadBytes: Int
        var uploadSHA256: String
        var uploadEchoed: Bool
    }

    static let concurrent = 20
    static let uploadSize = 1 << 20

    /// Runs Go's client against the proxy's route `/api` and checks what it saw: every exchange 200 over HTTP/2.0, one
    /// dial and one connection for all of them, the upload's digest echoed.
    static func runClient(port: Int) async throws -> Summary {
        let client = try await GoHTTP2Client.binary()
        let result = try await ChildProcess.run(
            client, ["-url", "http://127.0.0.1:\(port)/api", "-n", "\(concurrent)", "-upload", "\(uploadSize)"])
        #expect(result.status == 0, "go-h2-client: \(result.stderr)")
        let summary = try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
        #expect(summary.exchanges.count == concurrent + 2)
        for exchange in summary.exchanges {
            #expect(exchange.status == 200, "\(exchange)")
            #expect(exchange.proto == "HTTP/2.0", "\(exchange)")
            #expect(exchange.error == nil, "\(exchange)")
        }
        #expect(summary.dials == 1)
        #expect(summary.connections?.count == 1, "\(summary.connections ?? [])")
        #expect(summary.uploadBytes == uploadSize)
        #expect(summary.uploadEchoed)
        return summary
    }

    @Test("to an HTTP/1.1 upstream: every stream answered over HTTP/2 on one connection, each with the token")
    func http1Upstream() async throws {
        try await ProxyHarness.with(upstream: { head in
            guard head.header("authorization")?.hasPrefix("Bearer ") == true else { return .respond(status: 401) }
            // `.echo` answers with the body's SHA-256, which the client looks for.
            return head.method == "POST" ? .echo : .respond(status: 200, text: head.uri)
        }) { proxy, upstream in
            let summary = try await Self.runClient(port: proxy.port)
            let requests = upstream.requests
            #expect(requests.count == Self.concurrent + 2)
            #expect(requests.allSatisfy { $0.head.header("authorization")?.hasPrefix("Bearer ") == true })
            let upload = try #require(requests.first { $0.head.method == "POST" })
            #expect(upload.head.uri == "/base/upload")
            #expect(upload.bodyLength == Self.uploadSize)
            #expect(upload.bodySHA256 == summary.uploadSHA256)
        }
    }

    @Test("to an h2c upstream: HTTP/2 end to end, each stream with the token, one upstream connection")
    func h2cUpstream() async throws {
        try await HTTP2UpstreamTests.with(answer: { request in
            guard request.header("authorization")?.hasPrefix("Bearer ") == true else { return .respond(status: 401) }
            let body = request.header(":method") == "POST" ? request.bodySHA256 : request.path
            return .respond(status: 200, body: ByteBuffer(string: body))
        }) { proxy, upstream in
            let summary = try await Self.runClient(port: proxy.port)
            let requests = upstream.requests
            #expect(requests.count == Self.concurrent + 2)
            #expect(requests.allSatisfy { $0.header("authorization")?.hasPrefix("Bearer ") == true })
            let upload = try #require(requests.first { $0.header(":method") == "POST" })
            #expect(upload.path == "/base/upload")
            #expect(upload.bodyLength == Self.uploadSize)
            #expect(upload.bodySHA256 == summary.uploadSHA256)
            #expect(upstream.connections == 1)
        }
    }
}

/// Builds `Tests/upstreams/go-h2-client` once per source version, under the account's cache folder, against Debian's
/// golang.org/x/net (GOPATH mode: no network to fetch modules), or ends the test: failed in CI, cancelled with the
/// reason elsewhere.
enum GoHTTP2Client {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("upstreams/go-h2-client/main.go")
    /// Where golang-golang-x-net-dev installs golang.org/x/net, and the x/text it imports, in GOPATH layout.
    static let gocode = "/usr/share/gocode"

    static func binary() async throws -> String {
        do {
            guard FileManager.default.fileExists(atPath: gocode + "/src/golang.org/x/net/http2") else {
                throw ReferenceFailure(reason: "no golang.org/x/net/http2 under \(gocode)")
            }
            return try await ReferenceProgramCache.buildGo(
                main: source, hashing: [source], folder: "go-h2-client", name: "go-h2-client", gopath: [gocode])
        } catch let failure as ReferenceFailure {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("\(failure.reason) (CI must install golang-go and golang-golang-x-net-dev: see .ci/run)")
                throw failure
            }
            try Test.cancel("Go's HTTP/2 client unavailable: \(failure.reason)")
        }
    }
}
