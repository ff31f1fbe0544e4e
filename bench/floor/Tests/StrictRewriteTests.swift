import NIOCore
import Testing

@testable import BearerCodec
@testable import bench_floor_proxy

/// The prototype's own rewrite (``RequestRewrite``), byte for byte.
@Suite("bench-floor-proxy: the strict prototype's forwarded heads")
struct StrictRewriteTests {
    @Test("the forwarded request: prefix stripped, hop-by-hop and named fields out, Host and Authorization ours")
    func forwardedRequest() throws {
        let text =
            "GET /bench/x?q=1 HTTP/1.1\r\nHost: proxy:80\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
            + "Authorization: Basic eA==\r\nAccept: */*\r\nKeep-Alive: 5\r\nUser-Agent: t\r\n\r\n"
        let rewrite = RequestRewrite(stripPrefix: "/bench", host: "up:81", authorization: "Bearer tok")
        let array = Array(text.utf8)
        let head = try #require(try RequestHead.parse(array.span))
        var buffer = ByteBuffer()
        head.writeForwarded(array.span, rewrite: rewrite, into: &buffer)
        let out = String(buffer: buffer)
        #expect(
            out
                == "GET /x?q=1 HTTP/1.1\r\nAccept: */*\r\nUser-Agent: t\r\nHost: up:81\r\nAuthorization: Bearer tok\r\n\r\n"
        )
    }

    @Test(
        "the prefix alone and with a query become /",
        arguments: [("/bench", "/"), ("/bench?a", "/?a"), ("/benchx", "/benchx")])
    func prefixStrip(_ target: String, _ expected: String) throws {
        let text = "GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"
        let rewrite = RequestRewrite(stripPrefix: "/bench", host: "u", authorization: "Bearer t")
        let array = Array(text.utf8)
        let head = try #require(try RequestHead.parse(array.span))
        var buffer = ByteBuffer()
        head.writeForwarded(array.span, rewrite: rewrite, into: &buffer)
        let out = String(buffer: buffer)
        #expect(out.hasPrefix("GET \(expected) HTTP/1.1\r\n"))
    }

    @Test("the forwarded response keeps the chunked line, drops the rest of hop-by-hop, says close when closing")
    func forwardedResponse() throws {
        let text =
            "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nKeep-Alive: timeout=5\r\n"
            + "Content-Type: a/b\r\n\r\n"
        let array = Array(text.utf8)
        let head = try #require(try ResponseHead.parse(array.span, requestWasHead: false))
        #expect(head.framing == .chunked)
        var buffer = ByteBuffer()
        head.writeForwarded(array.span, closing: true, into: &buffer)
        let out = String(buffer: buffer)
        #expect(
            out == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\nConnection: close\r\n\r\n")
    }
}
