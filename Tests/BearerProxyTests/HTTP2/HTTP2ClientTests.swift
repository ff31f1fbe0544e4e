import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Testing

@testable import BearerDataPlane

/// HTTP/2 clients with prior knowledge (RFC 9113 §3.3) on the proxy's TCP listener, to an HTTP/1.1 upstream, on real
/// sockets: each stream is one exchange with every rule an HTTP/1.1 request has.
@Suite("HTTP/2 clients: each stream is one exchange through the proxy")
struct HTTP2ClientTests {
    @Test(
        "a GET over HTTP/2 reaches the upstream as HTTP/1.1 with the route's token; the answer comes back on its stream"
    )
    func get() async throws {
        try await ProxyHarness.with(upstream: { _ in
            .respond(status: 200, headers: [("x-answer", "yes")], body: Array("twelve bytes".utf8))
        }) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let response = try await client.send(
                HTTP2TestClient.request("GET", "/api/hello?x=1", fields: [("accept", "text/plain")]))
            await client.close()
            #expect(response.status == 200)
            #expect(response.bodyText == "twelve bytes")
            #expect(response.header("x-answer") == "yes")
            #expect(response.header("content-length") == "12")
            for name in ["connection", "keep-alive", "transfer-encoding"] {
                #expect(response.header(name) == nil, "\(name) on an HTTP/2 response")
            }
            let request = try #require(upstream.requests.first)
            #expect(request.head.uri == "/base/hello?x=1")
            #expect(request.head.version == .http1_1)
            #expect(request.head.headers["accept"] == ["text/plain"])
            let claims = try jwtClaims(request.head.headers["authorization"].first)
            #expect(claims["aud"] as? String == "api://api")
        }
    }

    @Test(
        "request bodies: with content-length and without (sent on as chunks), both arrive whole",
        arguments: [true, false])
    func bodies(withLength: Bool) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let parts = (0..<20).map { ByteBuffer(repeating: UInt8(65 + $0), count: 10_000) }
            let fields = withLength ? [("content-length", "200000")] : []
            let response = try await client.send(
                HTTP2TestClient.request("POST", "/api/upload", fields: fields), body: parts)
            await client.close()
            #expect(response.status == 200)
            let request = try #require(upstream.requests.first)
            #expect(request.bodyLength == 200_000)
            #expect(request.complete)
            #expect(request.head.headers["content-length"] == (withLength ? ["200000"] : []))
            #expect(request.head.headers["transfer-encoding"] == (withLength ? [] : ["chunked"]))
        }
    }

    @Test("100 streams at once on one connection: every one answered, each upstream request carries the token")
    func concurrentStreams() async throws {
        try await ProxyHarness.with(upstream: { head in .respond(status: 200, body: Array(head.uri.utf8)) }) {
            proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let response = try await client.send(HTTP2TestClient.request("GET", "/api/n/\(index)"))
                        return "\(response.status ?? 0) \(response.bodyText)"
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            await client.close()
            #expect(bodies == Set((0..<100).map { "200 /base/n/\($0)" }))
            #expect(upstream.requests.count == 100)
            #expect(
                upstream.requests.allSatisfy { $0.head.headers["authorization"].first?.hasPrefix("Bearer ") == true })
        }
    }

    @Test(
        "the proxy's own answers per stream: no route is a 404 problem, HEAD ends on its head, and the connection serves on"
    )
    func localAnswers() async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, body: Array("upstream".utf8)) }) {
            proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let missing = try await client.send(HTTP2TestClient.request("GET", "/nowhere"))
            let head = try await client.send(HTTP2TestClient.request("HEAD", "/api/x"))
            let next = try await client.send(HTTP2TestClient.request("GET", "/api/y"))
            await client.close()
            #expect(missing.status == 404)
            #expect(missing.header("content-type") == "application/problem+json")
            let problem = try JSONSerialization.jsonObject(with: Data(missing.bodyText.utf8)) as? [String: Any]
            #expect(problem?["status"] as? Int == 404, "\(missing.bodyText)")
            #expect(head.status == 200)
            #expect(head.endedWithHead)
            #expect(head.body.readableBytes == 0)
            #expect(next.bodyText == "upstream")
            #expect(upstream.requests.map(\.head.uri) == ["/base/x", "/base/y"])
        }
    }

    @Test("a client's own authorization never reaches the upstream over HTTP/2 either")
    func clientAuthorizationReplaced() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let response = try await client.send(
                HTTP2TestClient.request(
                    "GET", "/api/x", fields: [("authorization", "Bearer stolen"), ("cookie", "a=1"), ("cookie", "b=2")])
            )
            await client.close()
            #expect(response.status == 200)
            let request = try #require(upstream.requests.first)
            #expect(request.head.headers["authorization"].count == 1)
            #expect(request.head.headers["authorization"].first != "Bearer stolen")
        }
    }

    @Test(
        "a malformed stream is reset with PROTOCOL_ERROR and counted; the connection and its other streams go on",
        arguments: [
            ("host differs from :authority", [("host", "elsewhere.example")]),
            ("a CR LF in a value", [("x-smuggle", "a\r\nx-injected: 1")]),
            ("a NUL in a value", [("x-nul", "a\u{0}b")]),
            ("connection-specific", [("connection", "close")]),
            ("te other than trailers", [("te", "gzip")]),
        ])
    func malformed(name: String, fields: [(String, String)]) async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port, validates: false)
            let refused = try await client.send(HTTP2TestClient.request("GET", "/api/bad", fields: fields))
            let next = try await client.send(HTTP2TestClient.request("GET", "/api/good"))
            await client.close()
            #expect(refused.status == nil, "\(name): answered \(refused.status ?? 0)")
            #expect(refused.reset == .protocolError, "\(name)")
            #expect(next.status == 200, "\(name)")
            #expect(upstream.requests.map(\.head.uri) == ["/base/good"], "\(name)")
            #expect(upstream.requests.allSatisfy { $0.head.headers["x-injected"].isEmpty })
        }
    }

    @Test("an 8 MiB download on one stream arrives whole through the client's flow-control window")
    func download() async throws {
        let size = 8 << 20
        try await ProxyHarness.with(upstream: { _ in .download(bytes: size, chunked: true) }) { proxy, _ in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let response = try await client.send(HTTP2TestClient.request("GET", "/api/big"))
            await client.close()
            #expect(response.status == 200)
            #expect(response.body.readableBytes == size)
            let digest = SHA256.hash(data: Array(response.body.readableBytesView)).map { String(format: "%02x", $0) }
                .joined()
            #expect(digest == FakeUpstream.downloadSHA256(bytes: size))
        }
    }

    @Test("1 GiB to a stream whose window the client never opens: the upstream is held back before 64 MiB")
    func zeroWindow() async throws {
        let total = 1 << 30
        let bound = 64 << 20
        try await DownloadBackpressureTests.withFirehose(total: total) { port, written in
            let route = #"{ "prefix": "/api", "upstream": "http://127.0.0.1:\#(port)", "scopes": ["api://api/Read"] }"#
            try await ProxyHarness.with(routes: "[\(route)]") { proxy in
                // SETTINGS_INITIAL_WINDOW_SIZE 0 (RFC 9113 §6.9.2): the proxy may send no DATA on any stream, and
                // no WINDOW_UPDATE ever comes, so the stream can never be written.
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: proxy.port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            var configuration = NIOHTTP2Handler.Configuration()
                            configuration.connection.initialSettings = [
                                HTTP2Setting(parameter: .initialWindowSize, value: 0),
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                            ]
                            let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                                mode: .client, configuration: configuration
                            ) { stream in
                                stream.eventLoop.makeCompletedFuture {
                                    try HTTP2TestClient.Stream(wrappingChannelSynchronously: stream)
                                }
                            }
                            return HTTP2TestClient(channel: channel, multiplexer: multiplexer)
                        }
                    }
                let stream = try await channel.multiplexer.openStream { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try HTTP2TestClient.Stream(wrappingChannelSynchronously: stream)
                    }
                }
                try await stream.executeThenClose { inbound, outbound in
                    try await outbound.write(
                        .headers(.init(headers: HTTP2TestClient.request("GET", "/api/big"), endStream: true)))
                    var head: Int?
                    for try await frame in inbound {
                        if case .headers(let frame) = frame {
                            head = frame.headers.first(name: ":status").flatMap { Int($0) }
                        }
                        break
                    }
                    #expect(head == 200, "the answer's head is not flow-controlled and arrives")
                    let sent = try await DownloadBackpressureTests.bytesWhenStalled(written, total: total)
                    #expect(sent > 0, "the upstream wrote nothing")
                    #expect(sent < bound, "the proxy took \(sent) bytes for a stream its client never let it write")
                }
                await channel.close()
            }
        }
    }

    @Test("curl --http2-prior-knowledge gets the upstream's answer with the route's token")
    func curl() async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 201, body: Array("made".utf8)) }) {
            proxy, upstream in
            let curl = try await ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-s", "--http2-prior-knowledge", "-w", " %{http_version} %{http_code}", "-d", "x=1",
                    "http://127.0.0.1:\(proxy.port)/api/made",
                ])
            #expect(curl.stdout == "made 2 201", "curl: \(curl.stdout) \(curl.stderr)")
            let request = try #require(upstream.requests.first)
            #expect(request.head.method == "POST")
            #expect(request.bodyText == "x=1")
            #expect(request.head.headers["authorization"].first?.hasPrefix("Bearer ") == true)
        }
    }

    @Test("a graceful shutdown: the stream in flight completes after the listener has closed")
    func drain() async throws {
        let (events, feed) = AsyncStream<String>.makeStream()
        try await ProxyHarness.with(upstream: { _ in .events(events) }) { proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            async let response = client.send(HTTP2TestClient.request("GET", "/api/stream"))
            try await upstream.waitForRequests(1)
            async let drained: Void = proxy.proxy.server.shutdown()
            // The listener closes first: once a new connection is refused, the drain has begun.
            var refused = false
            for _ in 0..<200 where !refused {
                if let probe = try? await TestConnection.open(port: proxy.port, timeout: .seconds(1)) {
                    await probe.close()
                    try await Task.sleep(for: .milliseconds(20))
                } else {
                    refused = true
                }
            }
            #expect(refused, "the listener never closed")
            feed.yield("data: still here\n\n")
            feed.finish()
            let answer = try await response
            await drained
            await client.close()
            #expect(answer.status == 200)
            #expect(answer.reset == nil)
            #expect(answer.bodyText.contains("still here"), "\(answer.bodyText)")
        }
    }

    /// A tool from nghttp2-client, which CI installs; missing elsewhere, the test is skipped.
    static func tool(_ name: String) throws -> String {
        let path = "/usr/bin/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("\(path) is missing (CI installs nghttp2-client: see .ci/run)")
            }
            try Test.cancel("\(path) is missing (nghttp2-client)")
        }
        return path
    }

    @Test("nghttp (prior knowledge) gets the answer, its status and headers, over HTTP/2")
    func nghttp() async throws {
        let nghttp = try Self.tool("nghttp")
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, body: Array("from upstream".utf8)) }) {
            proxy, upstream in
            let result = try await ChildProcess.run(nghttp, ["-v", "http://127.0.0.1:\(proxy.port)/api/ng"])
            #expect(result.status == 0, "nghttp: \(result.stderr)")
            #expect(result.stdout.contains("from upstream"), "\(result.stdout)")
            #expect(result.stdout.contains(":status: 200"), "\(result.stdout)")
            #expect(result.stdout.contains("x-request-id:"))
            #expect(upstream.requests.first?.head.headers["authorization"].first?.hasPrefix("Bearer ") == true)
        }
    }

    @Test("h2load: 2,000 requests on 4 connections, 20 streams each at once — every one succeeds")
    func h2load() async throws {
        let h2load = try Self.tool("h2load")
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, body: Array("ok".utf8)) }) {
            proxy, upstream in
            let result = try await ChildProcess.run(
                h2load, ["-n", "2000", "-c", "4", "-m", "20", "http://127.0.0.1:\(proxy.port)/api/load"])
            #expect(result.status == 0, "h2load: \(result.stderr)")
            #expect(
                result.stdout.contains("2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored"),
                "\(result.stdout)")
            #expect(result.stdout.contains("status codes: 2000 2xx"), "\(result.stdout)")
            #expect(upstream.requests.count == 2000)
            // Every stream's handler went through its whole life in order: no machine met an event out of turn.
            let metrics = try await OperationsTests.samples(port: proxy.port)
            let stateErrors = metrics.filter { $0.key.hasPrefix("bearer_proxy_state_errors_total") && $0.value != 0 }
            #expect(stateErrors.isEmpty, "\(stateErrors)")
            #expect(metrics[#"bearer_proxy_requests_total{method="GET",route="/api",status_class="2xx"}"#] == 2000)
        }
    }

    @Test("HTTP/1.1 on the same listener is untouched, even a request that begins like the preface")
    func http1Beside() async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, body: Array("h1".utf8)) }) {
            proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let response = try await client.send(uri: "/api/one")
            await client.close()
            #expect(response.bodyText == "h1")
            let responses = try await TestClient.raw(
                port: proxy.port, text: "PRI * HTTP/2.0\r\nHost: x\r\n\r\n", expectedResponses: 1)
            #expect(responses.first.map { $0.status.code >= 400 } == true)
            #expect(upstream.requests.map(\.head.uri) == ["/base/one"])
        }
    }
}
