import Foundation
import NIOHTTP1
import Testing

@testable import BearerDataPlane

/// A hostile upstream that frames its answer so that an HTTP/1.0 client cannot learn its length (#23 item 1: the
/// exchange's machine now decides, from the upstream's head, that such an answer ends with the connection). Were the
/// proxy to keep the client's connection, the client would wait forever for the body's end — or read what follows
/// as part of it — and a pipelined request after it could be answered out of step. The class, not one case: a
/// chunked answer, a length the upstream's `Connection` names (dropped with it, so none is forwarded), and an answer
/// that ends with the upstream's close. (A length and chunks at once is no valid answer at all: the codec refuses
/// it, a 502 that `UpstreamTrustTests` covers.)
@Suite("Attack: an answer an HTTP/1.0 client cannot delimit ends with the client's connection")
struct ResponseFramingTests {
    static let answers = [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive, content-length\r\n\r\nhello",
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello",
    ]

    /// The upstream's answer: an HTTP/1.0 one without a length ends when the upstream closes (RFC 9112 §6.3 rule 8).
    static func answer(_ text: String) -> RawUpstream.Answer {
        text.hasPrefix("HTTP/1.0") ? .rawThenClose(text) : .raw(text)
    }

    @Test(
        "an HTTP/1.0 keep-alive client gets the whole body, Connection: close, and nothing after it is read",
        arguments: answers)
    func http10ClientConnectionCloses(answer: String) async throws {
        try await RawUpstream.withProxy(answer: { _ in Self.answer(answer) }) { proxy, upstream in
            // Two pipelined keep-alive requests: the first's answer can only end with the connection.
            let requests = (1...2).map {
                "GET /api/\($0) HTTP/1.0\r\nHost: 127.0.0.1:\(proxy.port)\r\nConnection: keep-alive\r\n\r\n"
            }.joined()
            let responses = try await TestClient.raw(port: proxy.port, text: requests, expectedResponses: 1)
            #expect(responses.count == 1)
            #expect(responses.first?.status == .ok)
            #expect(responses.first?.bodyText == "hello")
            #expect(responses.first?.header("connection") == "close")
            #expect(responses.first?.header("content-length") == nil)
            #expect(upstream.requests.map(\.uri) == ["/base/1"], "a request after the close was read")
        }
    }

    @Test(
        "an HTTP/1.1 client gets the same answers re-framed in chunks, and its connection is kept",
        arguments: answers)
    func http11ClientKeepsTheConnection(answer: String) async throws {
        try await RawUpstream.withProxy(answer: { _ in Self.answer(answer) }) { proxy, upstream in
            let client = try await TestConnection.open(port: proxy.port)
            let first = try await client.send(uri: "/api/1")
            let second = try await client.send(uri: "/api/2")
            await client.close()
            #expect(first.bodyText == "hello")
            #expect(first.header("transfer-encoding") == "chunked")
            #expect(second.bodyText == "hello")
            #expect(upstream.requests.map(\.uri) == ["/base/1", "/base/2"])
        }
    }
}
