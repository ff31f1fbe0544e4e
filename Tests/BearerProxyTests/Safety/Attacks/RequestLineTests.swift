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

/// The request line and `Host` as the references (Python's h11, Go's net/http) read them (issue #28 items 2–3):
/// `Host` is required and valid in every form of the target, and the method reaches the upstream byte for byte.
@Suite("Security: Host in every form, and the method as sent")
struct RequestLineTests {
    /// Requests the proxy must refuse for their Host; `{P}` is the proxy's port. Each is followed by a valid request
    /// on the same connection, which must not be read.
    static let badHosts: [(String, String)] = [
        ("absolute-form without Host", "GET http://127.0.0.1:{P}/api/x HTTP/1.1\r\n\r\n"),
        (
            "absolute-form with an invalid Host",
            "GET http://127.0.0.1:{P}/api/x HTTP/1.1\r\nHost: 127.0?0.1:{P}\r\n\r\n"
        ),
        ("absolute-form with another Host", "GET http://127.0.0.1:{P}/api/x HTTP/1.1\r\nHost: localhost:{P}\r\n\r\n"),
        ("absolute-form with another port", "GET http://127.0.0.1:{P}/api/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"),
        (
            "absolute-form with userinfo",
            "GET http://127.0.0.1:{P}@evil.example/api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n"
        ),
        ("a space in Host", "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1 :{P}\r\n\r\n"),
        ("a path in Host", "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}/x\r\n\r\n"),
        ("userinfo in Host", "GET /api/x HTTP/1.1\r\nHost: evil.example@127.0.0.1:{P}\r\n\r\n"),
        ("an unclosed IPv6 literal", "GET /api/x HTTP/1.1\r\nHost: [::1\r\n\r\n"),
        ("an empty port", "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:\r\n\r\n"),
        ("a bad port", "GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:8x\r\n\r\n"),
        ("an empty Host", "GET /api/x HTTP/1.1\r\nHost: \r\n\r\n"),
    ]

    @Test(
        "a request whose Host is missing, invalid or not the target's is refused and ends its connection",
        arguments: badHosts.map(\.0))
    func hostIsRequiredAndValid(name: String) async throws {
        let request = try #require(Self.badHosts.first { $0.0 == name }?.1)
        try await RawUpstream.withProxy { proxy, upstream in
            let next = "GET /api/next HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n"
            let text = request.replacing("{P}", with: "\(proxy.port)") + next
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 2)
            #expect(responses.count == 1, "\(name): \(responses.map(\.status))")
            #expect(responses.first.map { [400, 403].contains($0.status.code) } == true, "\(name)")
            #expect(upstream.acceptedConnections == 0, "\(name): forwarded")
        }
    }

    @Test(
        "absolute-form with a Host naming the same authority, or HTTP/1.0 without Host, is forwarded",
        arguments: [
            "GET http://127.0.0.1:{P}/api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n",
            "GET HTTP://LOCALHOST:{P}/api/x HTTP/1.1\r\nHost: localhost:{P}\r\n\r\n",
            "GET http://127.0.0.1:{P}/api/x HTTP/1.0\r\n\r\n",
            "GET /api/x HTTP/1.0\r\n\r\n",
        ])
    func sameAuthorityIsForwarded(request: String) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let text = request.replacing("{P}", with: "\(proxy.port)")
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 1)
            #expect(responses.map(\.status) == [.ok], "\(request)")
            #expect(upstream.requests.map(\.uri) == ["/base/x"])
        }
    }

    /// Every method llhttp parses in HTTP mode but `CONNECT` and `TRACE`, which the proxy refuses (405).
    static let methods = [
        "DELETE", "GET", "HEAD", "POST", "PUT", "OPTIONS", "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH",
        "SEARCH", "UNLOCK", "BIND", "REBIND", "UNBIND", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH",
        "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "PATCH", "PURGE", "MKCALENDAR", "LINK", "UNLINK", "SOURCE", "QUERY",
    ]

    @Test("the method reaches the upstream byte for byte, whatever name NIOHTTP1 gives it", arguments: methods)
    func methodIsForwardedAsSent(method: String) async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            let text = "\(method) /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nContent-Length: 0\r\n\r\n"
            let responses = try await TestClient.raw(
                port: proxy.port, text: text, expectedResponses: 1, requestMethods: [method])
            #expect(responses.first?.status == .ok, "\(method): \(responses.map(\.status))")
            let wire = String(decoding: upstream.received(on: 1, .plain), as: UTF8.self)
            #expect(wire.hasPrefix("\(method) /base/x HTTP/1.1\r\n"), "\(method) went up as \(wire.prefix(30))")
        }
    }

    @Test("a route's methods list names M-SEARCH as sent")
    func methodsListUsesTheToken() async throws {
        try await RawUpstream.withProxy(route: #""methods": ["M-SEARCH"]"#) { proxy, upstream in
            let text = "M-SEARCH /api/x HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\nContent-Length: 0\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 1)
            #expect(responses.first?.status == .ok)
            #expect(upstream.requests.count == 1)
        }
    }
}
