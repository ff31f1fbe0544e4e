import Foundation
import NIOHTTP1
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

/// What follows a request the proxy refuses, a request that ends the connection, or a malformed request in a
/// pipeline (RFC 9112 §6.3, §9.3.2, §9.6; issues #21 item 1 and #28 item 1). A front proxy that framed a refused
/// request differently from us would have its next request hidden in what follows: nothing after a refused head is
/// read, nothing after a connection's last request is read, and every request that reached the upstream gets the
/// upstream's own answer in its own slot.
@Suite("Security: a refusal ends its connection; pipelined answers stay in their slots")
struct PipelineAndRefusalTests {
    static func request(_ port: Int, _ method: String = "GET", _ path: String, extra: String = "", body: String = "")
        -> String
    {
        let length = body.isEmpty && method == "GET" ? "" : "Content-Length: \(body.utf8.count)\r\n"
        return "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(length)\(extra)\r\n\(body)"
    }

    /// Heads the request guard refuses, each as the first request on a connection. `{P}` is the proxy's port.
    static let refusedHeads: [(String, String)] = [
        ("two Host fields", "GET /api/a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nHost: 127.0.0.1:{P}\r\n\r\n"),
        ("an empty Host beside another", "GET /api/a HTTP/1.1\r\nHost: \r\nHost: 127.0.0.1:{P}\r\n\r\n"),
        ("no Host", "GET /api/a HTTP/1.1\r\nX: y\r\n\r\n"),
        ("a foreign Host", "GET /api/a HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
        (
            "Transfer-Encoding: identity, chunked",
            "POST /api/a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nTransfer-Encoding: identity, chunked\r\n\r\n"
        ),
        ("a dot segment", "GET /api/../a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n"),
        ("a malformed escape", "GET /api/%zz HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n"),
        ("a foreign Origin", "GET /api/a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nOrigin: https://evil.example\r\n\r\n"),
        (
            "a long target",
            "GET /api/" + String(repeating: "a", count: 20_000) + " HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n"
        ),
        ("an underscore Host", "GET /api/a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nX_Forwarded_For: 1.2.3.4\r\n\r\n"),
        ("no route", "POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nContent-Length: 3\r\n\r\nabc"),
        ("a method the route refuses", "DELETE /api/a HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n"),
    ]

    @Test(
        "after a refused head nothing more is read: one answer, the connection closes, no request goes upstream",
        arguments: refusedHeads.map(\.0), ["a second request", "a body holding a request", "nothing"])
    func refusalEndsTheConnection(refused: String, after: String) async throws {
        let head = try #require(Self.refusedHeads.first { $0.0 == refused }?.1)
        try await RawUpstream.withProxy(route: #""methods": ["GET", "POST"]"#) { proxy, upstream in
            let second = Self.request(proxy.port, "GET", "/api/second")
            let tail =
                switch after {
                case "a second request": second
                case "a body holding a request":
                    String(second.utf8.count, radix: 16) + "\r\n" + second + "\r\n0\r\n\r\n"
                default: ""
                }
            let text = head.replacing("{P}", with: "\(proxy.port)") + tail
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 3)
            #expect(responses.count == 1, "\(refused): \(responses.map(\.status))")
            #expect(responses.first.map { (400..<500).contains($0.status.code) } == true, "\(refused)")
            #expect(responses.first?.header("connection") == "close", "\(refused)")
            #expect(upstream.acceptedConnections == 0, "\(refused): the upstream was contacted")
        }
    }

    /// An upstream answer in chunks: to an HTTP/1.0 client only the close can end it, so even a request that asked
    /// to keep the connection is its last.
    static func chunked(_ body: String) -> String {
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n"
    }

    @Test(
        "after a connection's last request, its upstream answer goes to the client and nothing after it is read",
        arguments: ["Connection: close", "HTTP/1.0", "HTTP/1.0 keep-alive, answered in chunks"],
        ["a request", "garbage", "a malformed request", "a folded header"])
    func lastRequestEndsReading(last: String, after: String) async throws {
        let inChunks = last.hasSuffix("in chunks")
        let answer: @Sendable (RawRequest) -> RawUpstream.Answer = { request in
            let body = "\(request.method) \(request.uri)"
            return inChunks ? .raw(Self.chunked(body)) : .respond(status: 200, body: body)
        }
        try await RawUpstream.withProxy(answer: answer) { proxy, upstream in
            let host = "Host: 127.0.0.1:\(proxy.port)\r\n"
            let first =
                switch last {
                case "Connection: close": Self.request(proxy.port, "GET", "/api/first", extra: "Connection: close\r\n")
                case "HTTP/1.0": "GET /api/first HTTP/1.0\r\n\(host)\r\n"
                default: "GET /api/first HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\n"
                }
            let tail =
                switch after {
                case "a request": Self.request(proxy.port, "GET", "/api/second")
                case "garbage": "\u{01}\u{02} not http\r\n\r\n"
                case "a malformed request":
                    "POST /api/second HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
                default: "GET /api/second HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n"
                }
            let responses = try await TestClient.raw(port: proxy.port, text: first + tail, expectedResponses: 2)
            #expect(responses.map(\.status) == [.ok], "\(last) + \(after)")
            #expect(responses.first?.bodyText == "GET /base/first", "\(last) + \(after): not the upstream's answer")
            #expect(responses.first?.header("connection") == "close", "\(last) + \(after)")
            #expect(upstream.requests.map(\.uri) == ["/base/first"], "\(last) + \(after)")
        }
    }

    /// A malformed third message after two good ones, and what of it the upstream may see.
    static let malformedThird: [(String, String)] = [
        ("obs-fold", "GET /api/three HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"),
        (
            "bad chunk size",
            "POST /api/three HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
        ),
        (
            "CL and TE",
            "POST /api/three HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        ),
        ("bare LF", "GET /api/three HTTP/1.1\nHost: h\n\n"),
        (
            "two Content-Length",
            "POST /api/three HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
        ),
        ("an invalid method", "G(ET /api/three HTTP/1.1\r\nHost: h\r\n\r\n"),
        (
            "a chunk without its CRLF",
            "POST /api/three HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n"
        ),
    ]

    @Test(
        "a malformed request later in a pipeline gets its 400 in its own slot, after the upstream's answers",
        arguments: malformedThird.map(\.0))
    func malformedRequestKeepsItsSlot(malformation: String) async throws {
        let third = try #require(Self.malformedThird.first { $0.0 == malformation }?.1)
        try await RawUpstream.withProxy { proxy, upstream in
            let text =
                Self.request(proxy.port, "GET", "/api/one")
                + Self.request(proxy.port, "POST", "/api/two", body: "hello")
                + third.replacing("Host: h", with: "Host: 127.0.0.1:\(proxy.port)")
                + Self.request(proxy.port, "GET", "/api/four")
            let responses = try await TestClient.raw(
                port: proxy.port, text: text, expectedResponses: 4, requestMethods: ["GET", "POST", "POST"])
            #expect(responses.map(\.status) == [.ok, .ok, .badRequest], "\(malformation)")
            #expect(responses.prefix(2).map(\.bodyText) == ["GET /base/one", "POST /base/two"], "\(malformation)")
            #expect(responses.last?.header("connection") == "close", "\(malformation)")
            #expect(upstream.requests.map(\.uri) == ["/base/one", "/base/two"], "\(malformation)")
            // Nothing of the malformed request reached the upstream, not even its head.
            let wire = upstream.acceptedConnections > 0 ? upstream.received(on: 1, .plain) : []
            #expect(!wire.contains(text: "/base/three"), "\(malformation): part of it went upstream")
            #expect(!wire.contains(text: "/base/four"), "\(malformation)")
        }
    }
}
