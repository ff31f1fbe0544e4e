import Foundation
import NIOHTTP1
import Testing

@testable import BearerDataPlane

/// A hostile upstream answers a request and, in the same write, says more: a whole second response, a stray body
/// after an answer that has none, a stray `103`, or half a head (`X-Smuggled: ` and no end). Nobody asked for those
/// bytes. Were the connection pooled with them still held — or with more of them still in the socket — the next
/// request leased on it would take them for its answer, and every later answer would be one off: response-queue
/// poisoning, and with half a head, header injection into the next real answer. The rule under attack: bytes from
/// an upstream beyond the end of the answer to the last request sent on it end that connection; the next request,
/// pipelined or not, on this route or another, with a body or not, goes on another connection and gets its own
/// answer (RFC 9112 §9.3.2: one response per request, in order).
@Suite("Attack: an upstream's bytes that no request asked for end its connection, never answer the next request")
struct UnaskedUpstreamBytesTests {
    /// Where the bytes nobody asked for come, in the answer to the first request (always `/api/first`).
    struct Position: CustomTestStringConvertible, Sendable {
        let name: String
        let method: String
        let requestHeaders: String
        /// The upstream's whole write: the answer, then what nobody asked for.
        let answer: String
        /// What the client must get for the first request.
        let status: Int
        let body: String

        var testDescription: String { name }

        init(
            _ name: String, method: String = "GET", requestHeaders: String = "", answer: String, status: Int = 200,
            body: String
        ) {
            self.name = name
            self.method = method
            self.requestHeaders = requestHeaders
            self.answer = answer
            self.status = status
            self.body = body
        }
    }

    /// A complete response nobody asked for, which would answer the next request.
    static let smuggled = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nX-Smuggled: yes\r\n\r\nsmuggled"
    /// Half a head, which would begin the next real answer's head.
    static let halfHead = "HTTP/1.1 200 OK\r\nX-Smuggled: "
    /// A body large enough that the answer and what follows it come in several reads of the socket.
    static let large = String(repeating: "0123456789abcdef", count: 16 * 1024)

    static let positions: [Position] = [
        Position(
            "after a plain 200", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst" + smuggled, body: "first"),
        Position(
            "half a head after a plain 200", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst" + halfHead,
            body: "first"),
        Position(
            "after a HEAD answered with a body", method: "HEAD",
            answer: "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled", body: ""),
        Position(
            "a 304 with a stray body", answer: "HTTP/1.1 304 Not Modified\r\nContent-Length: 8\r\n\r\nsmuggled",
            status: 304, body: ""),
        Position(
            "a 204 with a stray body", answer: "HTTP/1.1 204 No Content\r\n\r\n" + smuggled, status: 204, body: ""),
        Position(
            "after a chunked answer's last chunk",
            answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n" + smuggled,
            body: "first"),
        Position(
            "after 100 Continue and a final answer",
            answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst" + smuggled,
            body: "first"),
        Position(
            "a stray 103 after the answer",
            answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
                + "HTTP/1.1 103 Early Hints\r\nLink: </smuggled>; rel=preload\r\n\r\n",
            body: "first"),
        Position(
            "after a 256 KiB answer (several reads)",
            answer: "HTTP/1.1 200 OK\r\nContent-Length: \(large.utf8.count)\r\n\r\n" + large + smuggled, body: large),
    ]

    /// What the request behind the poisoned answer is.
    enum Next: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sameRoute = "on the same route"
        case otherRoute = "on another route to the same upstream"
        case withBody = "a 256 KiB POST"

        var testDescription: String { rawValue }
    }

    static let postBody = String(repeating: "p", count: 256 * 1024)

    /// Two routes to one upstream (so one pool of connections): `/api` → `/base`, `/other` → `/elsewhere`.
    static func withProxy(
        tls: Bool = false, first: Position, _ body: (ProxyHarness, RawUpstream) async throws -> Void
    ) async throws {
        try await RawUpstream.with(tls: tls) { request in
            request.uri == "/base/first"
                ? .raw(first.answer)
                : .respond(status: 200, body: "\(request.method) \(request.uri) \(request.body.count)")
        } _: { upstream in
            let other =
                #"{ "prefix": "/other", "upstream": "\#(upstream.baseURL)/elsewhere", "scopes": ["api://other/Read"]"#
                + (upstream.tls ? #", "tls": { "caFile": "\#(TLSFixtures.caFile)" } }"# : " }")
            let routes = "[\(RawUpstream.route(to: upstream)), \(other)]"
            try await ProxyHarness.with(routes: routes) { try await body($0, upstream) }
        }
    }

    static func request(_ next: Next, port: Int) -> (text: String, answer: String, method: String) {
        let host = "Host: 127.0.0.1:\(port)\r\n"
        switch next {
        case .sameRoute:
            return ("GET /api/second HTTP/1.1\r\n\(host)\r\n", "GET /base/second 0", "GET")
        case .otherRoute:
            return ("GET /other/second HTTP/1.1\r\n\(host)\r\n", "GET /elsewhere/second 0", "GET")
        case .withBody:
            let text = "POST /api/second HTTP/1.1\r\n\(host)Content-Length: \(postBody.utf8.count)\r\n\r\n" + postBody
            return (text, "POST /base/second \(postBody.utf8.count)", "POST")
        }
    }

    static func expectFirst(_ response: TestResponse?, _ position: Position) {
        #expect(response?.status.code == UInt(position.status))
        #expect(response?.bodyText == position.body)
        #expect(response?.header("x-smuggled") == nil)
    }

    @Test(
        "pipelined behind the poisoned answer: each request gets its own answer, the next on another connection",
        arguments: positions, Next.allCases)
    func pipelined(position: Position, next: Next) async throws {
        try await Self.withProxy(first: position) { proxy, upstream in
            let first =
                "\(position.method) /api/first HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n"
                + "\(position.requestHeaders)\r\n"
            let second = Self.request(next, port: proxy.port)
            let responses = try await TestClient.raw(
                port: proxy.port, text: first + second.text, expectedResponses: 2,
                requestMethods: [position.method, second.method])
            #expect(responses.count == 2)
            Self.expectFirst(responses.first, position)
            #expect(responses.last?.status == .ok)
            #expect(responses.last?.bodyText == second.answer, "the second request got another's answer")
            #expect(responses.last?.header("x-smuggled") == nil, "the smuggled head reached the client")
            try await Self.expectOwnConnection(upstream)
        }
    }

    @Test(
        "not pipelined: the next request, on the same client connection, goes on another connection",
        arguments: positions)
    func sequential(position: Position) async throws {
        try await Self.withProxy(first: position) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let first = try await client.send(method: position.method, uri: "/api/first")
            let second = try await client.send(uri: "/api/second")
            let third = try await client.send(uri: "/other/third")
            await client.close()
            Self.expectFirst(first, position)
            #expect(second.bodyText == "GET /base/second 0")
            #expect(third.bodyText == "GET /elsewhere/third 0")
            try await Self.expectOwnConnection(upstream)
        }
    }

    @Test("through TLS too", arguments: [positions[0], positions[1], positions[8]])
    func tls(position: Position) async throws {
        try await Self.withProxy(tls: true, first: position) { proxy, upstream in
            let text =
                "GET /api/first HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n"
                + "GET /api/second HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n"
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: 2)
            Self.expectFirst(responses.first, position)
            #expect(responses.last?.bodyText == "GET /base/second 0")
            try await Self.expectOwnConnection(upstream)
        }
    }

    /// The first request's connection was not used again: every later request went on another one, and the
    /// upstream got each whole.
    static func expectOwnConnection(_ upstream: RawUpstream) async throws {
        try await upstream.waitForClosedConnections(1)
        let requests = upstream.requests
        guard let first = requests.first(where: { $0.uri == "/base/first" }) else {
            Issue.record("the first request never reached the upstream")
            return
        }
        // URIs only: a request's headers carry its token, which no test output shows.
        let reused = requests.filter { $0.uri != "/base/first" && $0.connection == first.connection }.map(\.uri)
        #expect(reused.isEmpty, "sent on the poisoned connection")
        for request in requests where request.method == "POST" {
            #expect(request.body.count == postBody.utf8.count, "the POST's body did not reach the upstream whole")
        }
    }

    /// Several answers on one kept connection, judged against the requests sent on it: a differential parse compares
    /// one message at a time and cannot see an answer that belongs to another request.
    @Test("a stream of answers on pooled connections: every answer is its own request's, in order")
    func streamJudgedAgainstRequests() async throws {
        try await Self.withProxy(first: Self.positions[0]) { proxy, upstream in
            let uris = ["/api/a", "/other/b", "/api/first", "/api/c", "/other/d", "/api/first", "/api/e"]
            let text = uris.map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1:\(proxy.port)\r\n\r\n" }.joined()
            let responses = try await TestClient.raw(port: proxy.port, text: text, expectedResponses: uris.count)
            #expect(responses.count == uris.count)
            for (uri, response) in zip(uris, responses) {
                let expected =
                    uri == "/api/first"
                    ? "first"
                    : "GET "
                        + uri.replacingOccurrences(of: "/api/", with: "/base/")
                        .replacingOccurrences(of: "/other/", with: "/elsewhere/") + " 0"
                #expect(response.bodyText == expected, "\(uri) got another request's answer")
                #expect(response.header("x-smuggled") == nil)
            }
            // Each connection's requests, in the order sent, were answered by that connection: no request followed
            // a poisoned answer on its connection.
            let byConnection = Dictionary(grouping: upstream.requests, by: \.connection)
            for (_, sent) in byConnection {
                let poisoned = sent.firstIndex { $0.uri == "/base/first" }
                if let poisoned { #expect(poisoned == sent.count - 1, "a request followed a poisoned answer") }
            }
        }
    }
}
