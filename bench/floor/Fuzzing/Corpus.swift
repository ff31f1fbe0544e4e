/// The inputs of the differential fuzz: the hostile requests of the product's own suite
/// (`Tests/BearerProxyTests/Safety/HostileRequestTests.swift`, `Attacks/SmugglingTests.swift`), valid messages of
/// every shape the proxy forwards, and seeded mutations of those.
package enum Corpus {
    package static let host = "Host: 127.0.0.1:8080"

    /// Hostile requests from the product's suite, by the product's names, with the status the product answers;
    /// those marked `parser: true` are ones a strict head parser must refuse by itself.
    package static let hostile: [(name: String, raw: String, parser: Bool)] = [
        (
            "Content-Length and Transfer-Encoding",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true
        ),
        (
            "two Content-Lengths",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", true
        ),
        (
            "Transfer-Encoding chunked, identity",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", true
        ),
        (
            "Transfer-Encoding gzip, chunked",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", true
        ),
        (
            "Transfer-Encoding identity, chunked",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n", true
        ),
        (
            "Transfer-Encoding on HTTP/1.0",
            "POST /api/x HTTP/1.0\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true
        ),
        ("obsolete line folding", "GET /api/x HTTP/1.1\r\n\(host)\r\nX-Folded: a\r\n b\r\n\r\n", true),
        ("Connection: content-length", "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: content-length\r\n\r\n", true),
        (
            "Connection: Transfer-Encoding",
            "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: Transfer-Encoding\r\n\r\n", true
        ),
        ("Connection: host, in a list", "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: keep-alive, host\r\n\r\n", true),
        ("Connection: authorization", "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: \tAuthorization \r\n\r\n", true),
        ("Connection: x-request-id", "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: x-request-id\r\n\r\n", false),
        ("Content-Length not a number", "GET /api/x HTTP/1.1\r\n\(host)\r\nContent-Length: +5\r\n\r\n", true),
        ("space before colon", "GET /api/x HTTP/1.1\r\n\(host)\r\nAuthorization : Bearer x\r\n\r\n", true),
        ("Transfer_Encoding", "GET /api/x HTTP/1.1\r\n\(host)\r\nTransfer_Encoding: chunked\r\n\r\n", false),
        ("raw control character", "GET /api/a\u{01}b HTTP/1.1\r\n\(host)\r\n\r\n", true),
        ("two Host fields", "GET /api/x HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n", true),
        ("two Hosts in one field", "GET /api/x HTTP/1.1\r\nHost: localhost, evil.example\r\n\r\n", true),
        ("no Host on HTTP/1.1", "GET /api/x HTTP/1.1\r\nAccept: */*\r\n\r\n", true),
        ("foreign Host", "GET /api/x HTTP/1.1\r\nHost: evil.example\r\n\r\n", false),
        ("dot-dot", "GET /api/../admin HTTP/1.1\r\n\(host)\r\n\r\n", false),
        ("encoded CR LF", "GET /api/a%0d%0aSet-Cookie:x HTTP/1.1\r\n\(host)\r\n\r\n", false),
        ("absolute-form, foreign authority", "GET http://evil.example/api/x HTTP/1.1\r\n\(host)\r\n\r\n", false),
        ("CONNECT", "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", true),
        ("TRACE", "TRACE /api/x HTTP/1.1\r\n\(host)\r\n\r\n", false),
        (
            "request target over 8 KiB",
            "GET /api/" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\(host)\r\n\r\n", true
        ),
        (
            "over 100 header fields",
            "GET /api/x HTTP/1.1\r\n\(host)\r\n" + (1...120).map { "X-H\($0): v\r\n" }.joined() + "\r\n", true
        ),
        (
            "one 40 KiB header",
            "GET /api/x HTTP/1.1\r\n\(host)\r\nX-Big: " + String(repeating: "b", count: 40 * 1024) + "\r\n\r\n", true
        ),
        (
            "header section over the parser's limit",
            "GET /api/x HTTP/1.1\r\n\(host)\r\nX-Huge: " + String(repeating: "h", count: 100 * 1024) + "\r\n\r\n", true
        ),
        ("bare LF line ends", "GET /api/x HTTP/1.1\n\(host)\n\n", true),
        ("bare CR in a value", "GET /api/x HTTP/1.1\r\n\(host)\r\nX-A: a\rb\r\n\r\n", true),
        ("NUL in a value", "GET /api/x HTTP/1.1\r\n\(host)\r\nX-A: a\u{0}b\r\n\r\n", true),
        ("HTTP/2.0 request line", "GET /api/x HTTP/2.0\r\n\(host)\r\n\r\n", true),
        (
            "chunk size with a sign",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n", true
        ),
        (
            "chunk without CRLF after its data",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", true
        ),
        ("smuggled request in a Content-Length body", SmugglingShapes.attack(framing: "content-length"), false),
        ("smuggled request in a chunked body", SmugglingShapes.attack(framing: "chunked"), false),
        (
            "trailers carrying credentials",
            "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\nTrailer: Authorization\r\n\r\n"
                + "5\r\nhello\r\n0\r\nAuthorization: Bearer client-chosen\r\nX-Forwarded-Host: evil.example\r\n\r\n",
            false
        ),
        ("UTF-8 value", "GET /api/x HTTP/1.1\r\n\(host)\r\nX-Data: caf\u{E9} \u{20AC} \u{1F600}\r\n\r\n", false),
    ]

    /// Valid requests of every shape the proxy forwards: the seeds of the mutations.
    package static let requests: [String] = [
        "GET /bench/x HTTP/1.1\r\nHost: 127.0.0.1:18088\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n",
        "POST /bench/upload?x=1 HTTP/1.1\r\n\(host)\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
        "POST /api/x HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n"
            + "0\r\nX-Trailer: t\r\n\r\n",
        "PUT /api/x HTTP/1.1\r\n\(host)\r\ntransfer-encoding: CHUNKED\r\n\r\n3;name=\"va\\\"l\"\r\nabc\r\n0\r\n\r\n",
        "GET /api/x HTTP/1.0\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        "GET http://localhost:8080/api/a?b=c HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\n\(host)\r\nOrigin: http://localhost:3000\r\n\r\n",
        "GET /api/x HTTP/1.1\r\n\(host)\r\nConnection: close, X-Custom\r\nX-Custom: 1\r\nAuthorization: Basic eA==\r\n"
            + "X-Forwarded-For: 10.0.0.1\r\nKeep-Alive: timeout=5\r\n\r\n",
        "PUT /api/x HTTP/1.1\r\n\(host)\r\nContent-Length: 0\r\n\r\n",
        "GET /api/x HTTP/1.1\r\n\(host)\r\nX-Data: caf\u{E9} \u{20AC}\r\nX-Empty:\r\nX-Spaces:   a b   \r\n\r\n",
        "DELETE /api/a%20b/c;p=1?q=%2F&r=~ HTTP/1.1\r\n\(host)\r\nIf-Match: \"abc\"\r\n\r\n",
        "HEAD /api/x HTTP/1.1\r\n\(host)\r\nTE: trailers\r\nConnection: TE\r\n\r\n",
        "PROPFIND /dav/ HTTP/1.1\r\n\(host)\r\nDepth: 1\r\nContent-Length: 3\r\n\r\nabc",
        "GET /ws HTTP/1.1\r\n\(host)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n",
    ]

    /// Valid responses, each with whether it answers a HEAD request.
    package static let responses: [(raw: String, head: Bool)] = [
        (
            "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
                + "Connection: keep-alive\r\n\r\n{\"ok\":true}", false
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n4\r\nwiki\r\n5;a=b\r\npedia\r\n"
                + "0\r\nX-Sum: 9\r\n\r\n", false
        ),
        ("HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n", false),
        ("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n", false),
        ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false),
        ("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nabc", false),
        ("HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n", true),
        ("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", false),
        (
            "HTTP/1.1 200 OK\r\nX-Data: caf\u{E9}\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nContent-Length: 1\r\n\r\na",
            false
        ),
        ("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 4\r\n\r\nbusy", false),
    ]
}

/// The product's smuggling shapes (`SmugglingTests.attack`): a POST whose body is a complete request.
package enum SmugglingShapes {
    package static let smuggled = "GET /base/smuggled HTTP/1.1\r\nHost: upstream\r\nContent-Length: 0\r\n\r\n"

    package static func attack(framing: String) -> String {
        let body =
            framing == "chunked"
            ? String(smuggled.utf8.count, radix: 16) + "\r\n" + smuggled + "\r\n0\r\n\r\n" : smuggled
        let header = framing == "chunked" ? "Transfer-Encoding: chunked" : "Content-Length: \(smuggled.utf8.count)"
        return "POST /api/x HTTP/1.1\r\n\(Corpus.host)\r\n\(header)\r\n\r\n\(body)"
    }
}
