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

/// Request smuggling through the proxy (SPEC §8, "Framing is the proxy's"): the upstream — framing bytes the way a
/// real HTTP/1.1 server does — must find exactly one request per client request, and nothing a client sends may
/// end up where another request's token is.
@Suite("Security: one message upstream per request, framed by the proxy")
struct SmugglingTests {
    static let smuggled = "GET /base/smuggled HTTP/1.1\r\nHost: upstream\r\nContent-Length: 0\r\n\r\n"

    /// A POST on `/api/x` whose body is a complete request, framed as `framing` says, with `extra` header lines.
    static func attack(port: Int, framing: String, extra: String = "") -> String {
        let body =
            framing == "chunked"
            ? String(smuggled.utf8.count, radix: 16) + "\r\n" + smuggled + "\r\n0\r\n\r\n" : smuggled
        let header =
            framing == "chunked" ? "Transfer-Encoding: chunked" : "Content-Length: \(smuggled.utf8.count)"
        return "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(header)\r\n\(extra)\r\n\(body)"
    }

    @Test(
        "Connection naming a header the proxy decides is refused, and nothing reaches the upstream",
        arguments: [
            "content-length", "Transfer-Encoding", "host", "authorization", "X-Request-Id", "x-bearer-proxy-key",
            "proxy-authorization", "keep-alive, content-length", "Content-Length ,close",
        ],
        ["content-length", "chunked"])
    func connectionCannotRemoveProxyHeaders(option: String, framing: String) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let attack = Self.attack(port: proxy.port, framing: framing, extra: "Connection: \(option)\r\n")
            let responses = try await TestClient.raw(
                port: proxy.port, text: attack, expectedResponses: 1, requestMethods: ["POST"])
            #expect(responses.first?.status == .badRequest)
            #expect(responses.first?.header("content-type") == "application/problem+json")
            #expect(upstream.acceptedConnections == 0, "the upstream was contacted")
        }
    }

    @Test(
        "a body holding a request is one request's body upstream; the next request on that connection gets its own answer",
        arguments: ["content-length", "chunked"])
    func bodyIsNeverASecondRequest(framing: String) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            // One client connection: both exchanges run on one event loop, so on one pooled upstream connection.
            let client = try await TestConnection.open(port: proxy.port)
            let headers: [(String, String)] =
                framing == "chunked" ? [("Transfer-Encoding", "chunked")] : []
            let first = try await client.send(
                method: "POST", uri: "/api/x", headers: headers, body: .text(Self.smuggled))
            let second = try await client.send(uri: "/api/next")
            await client.close()
            #expect(first.bodyText == "POST /base/x")
            #expect(second.bodyText == "GET /base/next", "the responses are out of step")
            let requests = upstream.requests
            #expect(requests.map(\.uri) == ["/base/x", "/base/next"])
            #expect(requests.first?.bodyText == Self.smuggled)
            #expect(requests.allSatisfy { $0.connection == 1 })
        }
    }

    @Test("an upgrade request with a body is not a tunnel: one request upstream, Upgrade stripped, then close")
    func upgradeWithBody() async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let request =
                "GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nConnection: Upgrade\r\n"
                + "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Content-Length: \(Self.smuggled.utf8.count)\r\n\r\n\(Self.smuggled)"
            let responses = try await TestClient.raw(port: proxy.port, text: request, expectedResponses: 2)
            #expect(responses.count == 1)
            #expect(responses.first?.status == .ok)
            #expect(responses.first?.header("connection") == "close")
            let received = upstream.requests
            #expect(received.map(\.uri) == ["/base/ws"])
            #expect(received.first?.bodyText == Self.smuggled)
            #expect(received.first?.header("upgrade") == [])
        }
    }

    @Test(
        "request trailers are dropped: no Authorization, client key or X-Forwarded-* reaches the upstream in them",
        arguments: [false, true])
    func trailersAreDropped(warm: Bool) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            // Warm: token cached and an upstream connection pooled, so the request's end finds its upstream
            // attached; cold: the end waits for the token and the connection.
            let client = try await TestConnection.open(port: proxy.port)
            if warm { #expect(try await client.send(uri: "/api/warm").status == .ok) }
            await client.close()
            let request =
                "POST /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nTransfer-Encoding: chunked\r\n"
                + "Trailer: Authorization\r\n\r\n5\r\nhello\r\n0\r\n"
                + "Authorization: Bearer client-chosen\r\nProxy-Authorization: Bearer key\r\n"
                + "X-Bearer-Proxy-Key: key\r\nX-Forwarded-Host: evil.example\r\nX-Custom: t\r\n\r\n"
            let responses = try await TestClient.raw(
                port: proxy.port, text: request, expectedResponses: 1, requestMethods: ["POST"])
            #expect(responses.first?.status == .ok)
            let received = try #require(upstream.requests.last)
            #expect(received.trailers.isEmpty)
            #expect(received.bodyText == "hello")
            #expect(received.header("authorization").count == 1)
            #expect(received.header("authorization").first?.hasPrefix("Bearer ey") == true)
            // Compared here, reported by name: a failure must not print the bytes, which hold the proxy's token.
            let bytes = upstream.received(on: received.connection, .plain)
            let leaked = ["client-chosen", "Bearer key", "X-Bearer-Proxy-Key", "evil.example", "X-Custom"].filter {
                bytes.contains(text: $0)
            }
            #expect(leaked.isEmpty, "trailer fields reached the upstream")
        }
    }

    @Test(
        "header bytes that are not UTF-8 are refused, never altered on the way",
        arguments: [[0xFF, 0xFE], [0xC3], [0x80, 0x41], [0xED, 0xA0, 0x80]] as [[UInt8]])
    func opaqueHeaderBytes(_ bytes: [UInt8]) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            var request = Array("GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nX-Data: a".utf8)
            request += bytes + Array("b\r\n\r\n".utf8)
            let responses = try await TestClient.raw(port: proxy.port, bytes: request, expectedResponses: 1)
            #expect(responses.first?.status == .badRequest)
            #expect(upstream.acceptedConnections == 0, "the upstream was contacted")
        }
    }

    @Test("valid UTF-8 and plain obs-text-free values pass through byte for byte")
    func utf8HeaderBytesPass() async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let value = "caf\u{E9} \u{20AC} \u{1F600}"
            let request = "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nX-Data: \(value)\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: request, expectedResponses: 1)
            #expect(responses.first?.status == .ok)
            let passed = upstream.received(on: 1, .plain).contains(text: "X-Data: \(value)\r\n")
            #expect(passed, "the value did not reach the upstream byte for byte")
        }
    }
}
