/// The seeds of the differential harness: valid messages of every shape the proxy forwards, and the known request
/// smuggling families (RFC 9112 §11.2; PortSwigger's CL.TE / TE.CL / TE.TE classes, the HTTP Garden's chunk-size,
/// chunk-extension, bare CR/LF, obs-fold and whitespace classes; the hostile suites of
/// `Tests/BearerProxyTests/Safety`), and the published classes of `SmugglingCorpus+Published.swift`, each with its
/// source. Every entry is one client stream; a `\u{XX}` stands for the byte XX.
enum SmugglingCorpus {
    static let entries: [CorpusEntry] =
        valid + framing + chunked + lineEnds + fields + targets + connections + published

    static let host = "Host: {HOST}\r\n"

    static func post(_ framing: String, _ body: String, target: String = "/api/p") -> String {
        "POST \(target) HTTP/1.1\r\n\(host)\(framing)\r\n\(body)"
    }

    static func chunked(_ body: String) -> String {
        post("Transfer-Encoding: chunked\r\n", body)
    }

    static let get = "GET /api/g HTTP/1.1\r\n\(host)\r\n"

    static let valid: [CorpusEntry] = [
        CorpusEntry(family: "plain", name: "GET", text: get, mustAgree: true),
        CorpusEntry(
            family: "plain", name: "GET with query and fields",
            text:
                "GET /api/g?a=1&b=%20 HTTP/1.1\r\n\(host)Accept: */*\r\nX-Two: 1\r\nx-two: 2\r\nUser-Agent: t\r\n\r\n",
            mustAgree: true),
        CorpusEntry(
            family: "plain", name: "POST with Content-Length", text: post("Content-Length: 5\r\n", "hello"),
            mustAgree: true),
        CorpusEntry(
            family: "plain", name: "POST chunked", text: chunked("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            mustAgree: true),
        CorpusEntry(
            family: "plain", name: "chunked with trailers",
            text: chunked("3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: two\r\n\r\n"), mustAgree: true),
        CorpusEntry(
            family: "plain", name: "PUT empty body", text: "PUT /api/p HTTP/1.1\r\n\(host)Content-Length: 0\r\n\r\n",
            mustAgree: true),
        CorpusEntry(family: "plain", name: "DELETE", text: "DELETE /api/d HTTP/1.1\r\n\(host)\r\n", mustAgree: true),
        CorpusEntry(family: "plain", name: "HEAD", text: "HEAD /api/h HTTP/1.1\r\n\(host)\r\n", mustAgree: true),
        CorpusEntry(
            family: "plain", name: "binary body", text: post("Content-Length: 4\r\n", "\u{0}\r\n\u{7F}"),
            mustAgree: true),
        CorpusEntry(
            family: "pipelined", name: "two GETs", text: get + get.replacing("/api/g", with: "/api/g2"), mustAgree: true
        ),
        CorpusEntry(
            family: "pipelined", name: "POST then GET",
            text: post("Content-Length: 3\r\n", "abc") + get, mustAgree: true),
        CorpusEntry(
            family: "pipelined", name: "chunked then GET",
            text: chunked("3\r\nabc\r\n0\r\n\r\n") + get, mustAgree: true),
        CorpusEntry(
            family: "pipelined", name: "three with close on the last",
            text: get + get + "GET /api/last HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", mustAgree: true),
        CorpusEntry(family: "pipelined", name: "a GET then part of a head", text: get + "GET /api/g HTTP/1.1\r\nHo"),
        CorpusEntry(family: "pipelined", name: "body cut short", text: post("Content-Length: 10\r\n", "hello")),
        CorpusEntry(
            family: "expect", name: "Expect: 100-continue",
            text: post("Content-Length: 3\r\nExpect: 100-continue\r\n", "abc"), mustAgree: true),
        CorpusEntry(
            family: "expect", name: "Expect: unknown", text: post("Content-Length: 3\r\nExpect: 200-ok\r\n", "abc")),
    ]

    /// CL.TE, TE.CL, TE.TE and the Content-Length forms (RFC 9112 §6.1, §6.3).
    static let framing: [CorpusEntry] = [
        CorpusEntry(
            family: "CL.TE", name: "CL then TE",
            text: post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG")),
        CorpusEntry(
            family: "TE.CL", name: "TE then CL",
            text: post("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "8\r\nSMUGGLED\r\n0\r\n\r\n")),
        CorpusEntry(family: "TE.TE", name: "xchunked", text: post("Transfer-Encoding: xchunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "chunked in mixed case", text: post("Transfer-Encoding: cHuNkEd\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "tab before chunked", text: post("Transfer-Encoding:\tchunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "two TE fields",
            text: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "chunked, identity",
            text: post("Transfer-Encoding: chunked, identity\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "gzip, chunked", text: post("Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(family: "TE.TE", name: "identity alone", text: post("Transfer-Encoding: identity\r\n", "")),
        CorpusEntry(
            family: "TE.TE", name: "chunked with no-break space",
            text: post("Transfer-Encoding: chunked\u{A0}\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "TE on HTTP/1.0",
            text: "POST /api/p HTTP/1.0\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        CorpusEntry(
            family: "TE.TE", name: "Transfer_Encoding",
            text: post("Transfer_Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "Content-Length", name: "two equal", text: post("Content-Length: 3\r\nContent-Length: 3\r\n", "abc")
        ),
        CorpusEntry(
            family: "Content-Length", name: "two different",
            text: post("Content-Length: 3\r\nContent-Length: 4\r\n", "abcd")),
        CorpusEntry(family: "Content-Length", name: "a list", text: post("Content-Length: 3, 3\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "leading zeros", text: post("Content-Length: 003\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "plus sign", text: post("Content-Length: +3\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "negative", text: post("Content-Length: -1\r\n", "")),
        CorpusEntry(family: "Content-Length", name: "hex", text: post("Content-Length: 0x3\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "empty", text: post("Content-Length:\r\n", "")),
        CorpusEntry(family: "Content-Length", name: "trailing space", text: post("Content-Length: 3 \r\n", "abc")),
        CorpusEntry(
            family: "Content-Length", name: "overflow", text: post("Content-Length: 99999999999999999999\r\n", "abc")),
        CorpusEntry(
            family: "Content-Length", name: "on a GET",
            text: "GET /api/g HTTP/1.1\r\n\(host)Content-Length: 3\r\n\r\nabc"),
    ]

    /// Chunk sizes and extensions (RFC 9112 §7.1, §7.1.1).
    static let chunked: [CorpusEntry] = [
        CorpusEntry(family: "chunk-size", name: "leading zeros", text: chunked("0003\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "0x prefix", text: chunked("0x3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "upper-case hex", text: chunked("A\r\n0123456789\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "space before", text: chunked(" 3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "space after", text: chunked("3 \r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "tab after", text: chunked("3\t\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "plus sign", text: chunked("+3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "negative", text: chunked("-3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "overlong", text: chunked("10000000000000003\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "empty", text: chunked("\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "not hex", text: chunked("zz\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "data longer than the size", text: chunked("3\r\nabcd\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "no CRLF after the data", text: chunked("3\r\nabc0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "no last chunk", text: chunked("3\r\nabc\r\n")),
        CorpusEntry(family: "chunk-extension", name: "token", text: chunked("3;ext\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "name=value", text: chunked("3;a=b\r\nabc\r\n0;c=d\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "quoted value", text: chunked("3;a=\"b;c\"\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-extension", name: "space before the semicolon", text: chunked("3 ;a\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "bare semicolon", text: chunked("3;\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "bare LF inside", text: chunked("3;a\nb\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "bare CR inside", text: chunked("3;a\rb\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "NUL inside", text: chunked("3;a\u{0}\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "trailers", name: "Content-Length in the trailers",
            text: chunked("3\r\nabc\r\n0\r\nContent-Length: 99\r\n\r\n")),
        CorpusEntry(family: "trailers", name: "folded trailer", text: chunked("3\r\nabc\r\n0\r\nX: a\r\n b\r\n\r\n")),
        CorpusEntry(
            family: "trailers", name: "space before a trailer's colon", text: chunked("3\r\nabc\r\n0\r\nX : a\r\n\r\n")),
    ]

    /// Line ends (RFC 9112 §2.2: a recipient MAY accept a bare LF; a bare CR is refused or replaced by SP).
    static let lineEnds: [CorpusEntry] = [
        CorpusEntry(family: "bare LF", name: "every line", text: "GET /api/g HTTP/1.1\nHost: {HOST}\n\n"),
        CorpusEntry(family: "bare LF", name: "request line", text: "GET /api/g HTTP/1.1\n\(host)\r\n"),
        CorpusEntry(family: "bare LF", name: "one field line", text: "GET /api/g HTTP/1.1\r\n\(host)X: y\n\r\n"),
        CorpusEntry(family: "bare LF", name: "end of the head", text: "GET /api/g HTTP/1.1\r\n\(host)\n"),
        CorpusEntry(family: "bare LF", name: "after chunk size", text: chunked("3\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "bare LF", name: "after chunk data", text: chunked("3\r\nabc\n0\r\n\r\n")),
        CorpusEntry(family: "bare LF", name: "last chunk", text: chunked("3\r\nabc\r\n0\n\n")),
        CorpusEntry(family: "bare CR", name: "in a value", text: "GET /api/g HTTP/1.1\r\n\(host)X: a\rb\r\n\r\n"),
        CorpusEntry(family: "bare CR", name: "as a line end", text: "GET /api/g HTTP/1.1\r\(host)\r\n"),
        CorpusEntry(family: "bare CR", name: "after chunk size", text: chunked("3\rabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "bare CR", name: "in the request line", text: "GET /api/g\r HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "empty lines", name: "CRLF before the request", text: "\r\n" + get),
        CorpusEntry(family: "empty lines", name: "CRLF between requests", text: get + "\r\n" + get),
    ]

    /// Field lines (RFC 9112 §5, §5.2; RFC 9110 §5.5).
    static let fields: [CorpusEntry] = [
        CorpusEntry(family: "obs-fold", name: "folded value", text: "GET /api/g HTTP/1.1\r\n\(host)X: a\r\n b\r\n\r\n"),
        CorpusEntry(
            family: "obs-fold", name: "folded with a tab", text: "GET /api/g HTTP/1.1\r\n\(host)X: a\r\n\tb\r\n\r\n"),
        CorpusEntry(family: "obs-fold", name: "first line folded", text: "GET /api/g HTTP/1.1\r\n X: a\r\n\(host)\r\n"),
        CorpusEntry(
            family: "obs-fold", name: "folded Transfer-Encoding",
            text: post("Transfer-Encoding:\r\n chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "whitespace before colon", name: "space", text: "GET /api/g HTTP/1.1\r\n\(host)X : a\r\n\r\n"),
        CorpusEntry(
            family: "whitespace before colon", name: "tab", text: "GET /api/g HTTP/1.1\r\n\(host)X\t: a\r\n\r\n"),
        CorpusEntry(
            family: "whitespace before colon", name: "Content-Length", text: post("Content-Length : 3\r\n", "abc")),
        CorpusEntry(
            family: "whitespace before colon", name: "Transfer-Encoding",
            text: post("Transfer-Encoding : chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(family: "field syntax", name: "no colon", text: "GET /api/g HTTP/1.1\r\n\(host)X\r\n\r\n"),
        CorpusEntry(family: "field syntax", name: "empty name", text: "GET /api/g HTTP/1.1\r\n\(host): a\r\n\r\n"),
        CorpusEntry(family: "field syntax", name: "empty value", text: "GET /api/g HTTP/1.1\r\n\(host)X:\r\n\r\n"),
        CorpusEntry(
            family: "field syntax", name: "no space after colon", text: "GET /api/g HTTP/1.1\r\n\(host)X:a\r\n\r\n",
            mustAgree: true),
        CorpusEntry(
            family: "field syntax", name: "trailing whitespace", text: "GET /api/g HTTP/1.1\r\n\(host)X: a \t\r\n\r\n"),
        CorpusEntry(
            family: "field syntax", name: "separator in name", text: "GET /api/g HTTP/1.1\r\n\(host)X(y): a\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "NUL in a value", text: "GET /api/g HTTP/1.1\r\n\(host)X: a\u{0}b\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "DEL in a value", text: "GET /api/g HTTP/1.1\r\n\(host)X: a\u{7F}b\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "vertical tab in a value",
            text: "GET /api/g HTTP/1.1\r\n\(host)X: a\u{B}b\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "SOH in a name", text: "GET /api/g HTTP/1.1\r\n\(host)X\u{1}: a\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "obs-text in a value",
            text: "GET /api/g HTTP/1.1\r\n\(host)X: caf\u{E9}\r\n\r\n"),
        CorpusEntry(
            family: "control bytes", name: "UTF-8 in a value",
            text: "GET /api/g HTTP/1.1\r\n\(host)X: caf\u{C3}\u{A9}\r\n\r\n"),
        CorpusEntry(family: "Host", name: "missing", text: "GET /api/g HTTP/1.1\r\nAccept: */*\r\n\r\n"),
        CorpusEntry(family: "Host", name: "twice", text: "GET /api/g HTTP/1.1\r\n\(host)\(host)\r\n"),
    ]

    /// Request lines and targets (RFC 9112 §3, §3.2).
    static let targets: [CorpusEntry] = [
        CorpusEntry(
            family: "request target", name: "absolute-form", text: "GET http://{HOST}/api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request target", name: "asterisk-form", text: "OPTIONS * HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request target", name: "authority-form", text: "CONNECT {HOST} HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request target", name: "fragment", text: "GET /api/g#f HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request target", name: "raw space", text: "GET /api/a b HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request target", name: "obs-text", text: "GET /api/caf\u{E9} HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "two spaces", text: "GET  /api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "tab separator", text: "GET\t/api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "lower-case method", text: "get /api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "unknown method", text: "FROB /api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "HTTP/1.2", text: "GET /api/g HTTP/1.2\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "HTTP/2.0", text: "GET /api/g HTTP/2.0\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "lower-case version", text: "GET /api/g http/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "no version", text: "GET /api/g\r\n\(host)\r\n"),
        CorpusEntry(family: "request line", name: "trailing space", text: "GET /api/g HTTP/1.1 \r\n\(host)\r\n"),
    ]

    /// Persistence, upgrades and what follows them (RFC 9112 §9.3, RFC 9110 §7.8).
    static let connections: [CorpusEntry] = [
        CorpusEntry(
            family: "HTTP/1.0", name: "keep-alive then another",
            text: "GET /api/a HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\nGET /api/b HTTP/1.0\r\n\(host)\r\n",
            mustAgree: true),
        CorpusEntry(
            family: "HTTP/1.0", name: "Keep-Alive in a list, a body, then another",
            text: "POST /api/a HTTP/1.0\r\n\(host)Connection: x-a, Keep-Alive\r\nContent-Length: 3\r\n\r\nabc" + get,
            mustAgree: true),
        CorpusEntry(
            family: "HTTP/1.0", name: "keep-alive and close, then another",
            text: "GET /api/a HTTP/1.0\r\n\(host)Connection: keep-alive, close\r\n\r\n" + get),
        CorpusEntry(
            family: "HTTP/1.0", name: "keep-alive in absolute-form, then another",
            text: "GET http://{HOST}/api/a HTTP/1.0\r\n\(host)Connection: keep-alive\r\n\r\n" + get),
        CorpusEntry(
            family: "HTTP/1.0", name: "no keep-alive, then bytes",
            text: "GET /api/a HTTP/1.0\r\n\(host)\r\nGET /api/b HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(
            family: "HTTP/1.0", name: "POST with Content-Length",
            text: "POST /api/p HTTP/1.0\r\n\(host)Content-Length: 3\r\n\r\nabc"),
        CorpusEntry(
            family: "Connection", name: "close, then a request",
            text: "GET /api/a HTTP/1.1\r\n\(host)Connection: close\r\n\r\n" + get),
        CorpusEntry(
            family: "Connection", name: "close in a list",
            text: "GET /api/a HTTP/1.1\r\n\(host)Connection: keep-alive, close\r\n\r\n" + get),
        CorpusEntry(
            family: "upgrade", name: "WebSocket handshake with a frame after",
            text: "GET /api/ws HTTP/1.1\r\n\(host)Connection: Upgrade\r\nUpgrade: websocket\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n\u{81}\u{05}hello"),
        CorpusEntry(
            family: "upgrade", name: "a request after an upgrade",
            text: "GET /api/ws HTTP/1.1\r\n\(host)Connection: upgrade\r\nUpgrade: websocket\r\n\r\n" + get),
        CorpusEntry(
            family: "upgrade", name: "Upgrade without the option",
            text: "GET /api/ws HTTP/1.1\r\n\(host)Upgrade: websocket\r\n\r\n" + get),
        CorpusEntry(
            family: "upgrade", name: "h2c",
            text:
                "GET /api/g HTTP/1.1\r\n\(host)Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
                + "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        CorpusEntry(
            family: "upgrade", name: "upgrade with a body",
            text: post("Content-Length: 3\r\nConnection: upgrade\r\nUpgrade: websocket\r\n", "abc") + get),
    ]
}
