import Foundation
import NIOHTTP1
import Testing

@testable import BearerDataPlane

/// HTTP/1.0's keep-alive (RFC 9112 §9.3, RFC 7230 appendix A.1.2), as `ab -k` and wget2 use it, on real sockets:
/// a client that lists `keep-alive` keeps its connection while each answer can be delimited without the close (a
/// length, or no body), and the answer says `Connection: keep-alive`. What stays its connection's last request is
/// here too; `ResponseFramingTests` has the answers an HTTP/1.0 client cannot delimit (they end its connection),
/// `PipelineAndRefusalTests` what is taken after a last request.
@Suite("HTTP/1.0 keep-alive: kept while each answer has a length, and said so")
struct HTTP10KeepAliveTests {
    static let keepAlive = [("Connection", "keep-alive")]

    @Test(
        "two HTTP/1.0 keep-alive requests on one connection: both reach the upstream, each answer says keep-alive",
        arguments: ["a body and its length", "204", "304", "HEAD"])
    func keptWhenDelimited(answer: String) async throws {
        let behaviour: UpstreamBehaviour =
            switch answer {
            case "204": .respond(status: 204)
            case "304": .respond(status: 304, headers: [("etag", "\"v1\"")])
            default: .respond(status: 200, text: "twelve bytes")
            }
        try await ProxyHarness.with(upstream: { _ in behaviour }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let method = answer == "HEAD" ? "HEAD" : "GET"
            var responses: [TestResponse] = []
            for path in ["/api/one", "/api/two"] {
                responses.append(
                    try await client.send(method: method, uri: path, headers: Self.keepAlive, version: .http1_0))
            }
            let open = client.isActive
            await client.close()
            for response in responses {
                #expect(response.version == .http1_0, "\(answer)")
                #expect(response.header("connection") == "keep-alive", "\(answer)")
                #expect(response.header("transfer-encoding") == nil, "\(answer)")
            }
            if answer == "a body and its length" || answer == "HEAD" {
                #expect(responses.map { $0.header("content-length") } == ["12", "12"])
                #expect(responses.map(\.bodyText) == (answer == "HEAD" ? ["", ""] : ["twelve bytes", "twelve bytes"]))
            }
            #expect(open, "\(answer): the proxy closed a connection it said it kept")
            #expect(upstream.requests.map(\.head.uri) == ["/base/one", "/base/two"], "\(answer)")
        }
    }

    @Test("pipelined: two keep-alive requests, then one without: three answers in order, the last says close")
    func pipelined() async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let host = "Host: 127.0.0.1:\(proxy.port)\r\n"
            let text =
                "GET /api/one HTTP/1.0\r\n\(host)Connection: Keep-Alive\r\n\r\n"
                + "POST /api/two HTTP/1.0\r\n\(host)Connection: x-a, keep-alive\r\nContent-Length: 5\r\n\r\nhello"
                + "GET /api/three HTTP/1.0\r\n\(host)\r\n"
                + "GET /api/four HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\n"
            let responses = try await TestClient.raw(
                port: proxy.port, text: text, expectedResponses: 4, requestMethods: ["GET", "POST", "GET", "GET"])
            #expect(responses.map(\.bodyText) == ["GET /base/one", "POST /base/two", "GET /base/three"])
            #expect(responses.map { $0.header("connection") } == ["keep-alive", "keep-alive", "close"])
            #expect(upstream.requests.map(\.uri) == ["/base/one", "/base/two", "/base/three"])
            #expect(upstream.requests.dropFirst().first?.bodyText == "hello")
        }
    }

    @Test(
        "the proxy's own answers have a length: a keep-alive HTTP/1.0 client keeps its connection after them",
        arguments: ["/-/health", "/-/no-such-endpoint"])
    func localAnswers(path: String) async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, text: "upstream") }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let local = try await client.send(uri: path, headers: Self.keepAlive, version: .http1_0)
            let next = try await client.send(uri: "/api/next", headers: Self.keepAlive, version: .http1_0)
            let open = client.isActive
            await client.close()
            #expect(local.status == (path == "/-/health" ? .ok : .notFound))
            #expect(local.header("connection") == "keep-alive")
            #expect(local.header("content-length") == String(local.bodyLength))
            #expect(next.bodyText == "upstream")
            #expect(open)
            #expect(upstream.requests.map(\.head.uri) == ["/base/next"])
        }
    }

    /// Requests that stay their connection's last although they list `keep-alive`: with `close` too (RFC 9112 §9.6),
    /// in absolute-form (the client's proxy keeps no HTTP/1.0 connection, RFC 9112 §9.3), asking to switch protocols
    /// (what follows would be the new protocol's), and a refused head (nothing after a refusal is read).
    static let lastRequests: [(String, String)] = [
        ("with close", "GET /api/first HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive, close\r\n\r\n"),
        ("absolute-form", "GET http://{H}/api/first HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive\r\n\r\n"),
        (
            "an upgrade",
            "GET /api/first HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive, upgrade\r\nUpgrade: websocket\r\n\r\n"
        ),
        ("no route", "GET /nowhere HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive\r\n\r\n"),
    ]

    @Test(
        "what stays the last request although it lists keep-alive: one answer, Connection: close, nothing more read",
        arguments: lastRequests.map(\.0))
    func lastDespiteKeepAlive(name: String) async throws {
        let first = try #require(Self.lastRequests.first { $0.0 == name }?.1)
        try await RawUpstream.withProxy { proxy, upstream in
            let host = "127.0.0.1:\(proxy.port)"
            let text =
                first.replacing("{H}", with: host)
                + "GET /api/second HTTP/1.0\r\nHost: \(host)\r\nConnection: keep-alive\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 2)
            #expect(responses.count == 1, "\(name): \(responses.map(\.status))")
            #expect(responses.first?.header("connection") == "close", "\(name)")
            #expect(upstream.requests.map(\.uri) == (name == "no route" ? [] : ["/base/first"]), "\(name)")
        }
    }

    @Test("a malformed request after a kept HTTP/1.0 one gets its 400 in its own slot, after the upstream's answer")
    func malformedAfterKeepAlive() async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let host = "Host: 127.0.0.1:\(proxy.port)\r\n"
            let text =
                "GET /api/one HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\n"
                + "POST /api/two HTTP/1.0\r\n\(host)Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"
            let responses = try await TestClient.raw(
                port: proxy.port, text: text, expectedResponses: 2, requestMethods: ["GET", "POST"])
            #expect(responses.map(\.status) == [.ok, .badRequest])
            #expect(responses.map { $0.header("connection") } == ["keep-alive", "close"])
            #expect(upstream.requests.map(\.uri) == ["/base/one"])
        }
    }

    @Test("ApacheBench -k (HTTP/1.0, Connection: keep-alive): every request on the one connection it opened")
    func apacheBench() async throws {
        let ab = "/usr/bin/ab"
        guard FileManager.default.isExecutableFile(atPath: ab) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("\(ab) is missing (CI installs apache2-utils: see .ci/run)")
                return
            }
            try Test.cancel("\(ab) is missing (apache2-utils)")
        }
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, text: "{\"ok\":true}") }) {
            proxy, upstream in
            let result = try await ChildProcess.run(
                ab, ["-k", "-n", "50", "-c", "1", "-s", "30", "http://127.0.0.1:\(proxy.port)/api/x"])
            #expect(result.status == 0, "\(result.stderr)")
            func figure(_ label: String) -> Int? {
                result.stdout.split(separator: "\n").first { $0.hasPrefix(label) }
                    .flatMap { Int($0.dropFirst(label.count).trimmingCharacters(in: .whitespaces)) }
            }
            #expect(figure("Complete requests:") == 50, "\(result.stdout)")
            #expect(figure("Failed requests:") == 0, "\(result.stdout)")
            #expect(figure("Keep-Alive requests:") == 50, "\(result.stdout)")
            #expect(upstream.requests.count == 50)
        }
    }
}
