import Crypto
import Foundation
import Testing

@testable import BearerDataPlane

/// Go's net/http as the HTTP/2 upstream (`Tests/upstreams/go-h2`): a server nobody on the project wrote, which checks
/// the bearer token on every stream itself and says which protocol and how many connections it saw.
@Suite("HTTP/2 upstreams: Go's net/http server over TLS")
struct GoHTTP2UpstreamTests {
    /// Runs `body` with the Go server and a proxy whose route `/api` speaks `version` to it over TLS.
    static func with(version: String, _ body: (ProxyHarness) async throws -> Void) async throws {
        let server = try await GoHTTP2Server.binary()
        _ = try await ChildProcess.withListening(
            executable: server, ["-cert", TLSFixtures.serverCertificateFile, "-key", TLSFixtures.serverKeyFile]
        ) { port, running in
            do {
                let routes = HTTP2UpstreamTests.route(to: "https://127.0.0.1:\(port)", version: version, tls: true)
                // One event loop: connections are per origin and loop, so Go's count of them is exact.
                try await ProxyHarness.with(routes: routes, threads: 1) { try await body($0) }
            } catch {
                running.signal(SIGKILL)
                throw error
            }
            running.signal(SIGKILL)
        }
    }

    @Test(
        "h2 and auto: an HTTP/1.1 client's request reaches Go over HTTP/2 with a bearer token",
        arguments: ["h2", "auto"])
    func http1Client(version: String) async throws {
        try await Self.with(version: version) { proxy in
            let response = try await TestClient.send(port: proxy.port, uri: "/api/hello")
            #expect(response.status == .ok, "\(response.bodyText)")
            #expect(response.bodyText == "GET /base/hello 0")
            #expect(response.header("x-proto") == "HTTP/2.0")
        }
    }

    @Test("an HTTP/2 client to Go's HTTP/2 server: HTTP/2 end to end")
    func http2Client() async throws {
        try await Self.with(version: "h2") { proxy in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let response = try await client.send(HTTP2TestClient.request("GET", "/api/two"))
            await client.close()
            #expect(response.status == 200)
            #expect(response.bodyText == "GET /base/two 0")
            #expect(response.header("x-proto") == "HTTP/2.0")
        }
    }

    @Test("50 concurrent requests: Go accepted one connection for all of them; a 1 MiB upload arrives whole")
    func concurrentAndUpload() async throws {
        try await Self.with(version: "h2") { proxy in
            let answers = try await withThrowingTaskGroup(of: (UInt, String).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let response = try await TestClient.send(port: proxy.port, uri: "/api/n/\(index)")
                        return (response.status.code, response.header("x-connections") ?? "")
                    }
                }
                return try await group.reduce(into: [(UInt, String)]()) { $0.append($1) }
            }
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0.0 == 200 && $0.1 == "1" }, "\(answers)")
            let upload = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/api/up", body: .stream(length: 1 << 20, chunked: false))
            #expect(upload.bodyText == "POST /base/up \(1 << 20)")
        }
    }
}

/// Builds `Tests/upstreams/go-h2` once per source version, under the account's cache folder (as the differential
/// references are built), or ends the test: failed in CI, cancelled with the reason elsewhere.
enum GoHTTP2Server {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("upstreams/go-h2/main.go")

    static func binary() async throws -> String {
        do {
            return try await build()
        } catch let failure as ReferenceFailure {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("\(failure.reason) (CI must install golang-go: see .ci/run)")
                throw failure
            }
            try Test.cancel("Go's HTTP/2 server unavailable: \(failure.reason)")
        }
    }

    private static func build() async throws -> String {
        try await ReferenceProgramCache.buildGo(main: source, hashing: [source], folder: "go-h2", name: "go-h2")
    }
}
