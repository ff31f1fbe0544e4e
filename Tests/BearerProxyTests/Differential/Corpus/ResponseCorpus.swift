/// Upstream responses for the differential harness, each answering a GET (RFC 9112 §4, §6, §7): valid framings the
/// proxy relays, and the response-side smuggling and splitting families. Every entry is one upstream stream.
enum ResponseCorpus {
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"

    static func response(_ fields: String, _ body: String, status: String = "200 OK") -> String {
        "HTTP/1.1 \(status)\r\n\(fields)\r\n\(body)"
    }

    static func chunked(_ body: String) -> String {
        response("Transfer-Encoding: chunked\r\n", body)
    }

    static let entries: [CorpusEntry] = [
        CorpusEntry(family: "plain", name: "Content-Length", text: ok, mustAgree: true),
        CorpusEntry(family: "plain", name: "chunked", text: chunked("2\r\nhi\r\n0\r\n\r\n"), mustAgree: true),
        CorpusEntry(
            family: "plain", name: "chunked with trailers", text: chunked("2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n"),
            mustAgree: true),
        CorpusEntry(family: "plain", name: "204", text: "HTTP/1.1 204 No Content\r\n\r\n", mustAgree: true),
        CorpusEntry(family: "plain", name: "100 then 200", text: "HTTP/1.1 100 Continue\r\n\r\n" + ok, mustAgree: true),
        CorpusEntry(family: "plain", name: "two responses", text: ok + ok, mustAgree: true),
        CorpusEntry(
            family: "plain", name: "body until close", text: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nrest"),
        CorpusEntry(family: "plain", name: "HTTP/1.0 body until close", text: "HTTP/1.0 200 OK\r\n\r\nrest"),
        CorpusEntry(family: "plain", name: "no reason phrase", text: "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n"),
        CorpusEntry(
            family: "plain", name: "no space after the status", text: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"),
        CorpusEntry(
            family: "CL.TE", name: "CL and TE",
            text: response("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "Content-Length", name: "two different",
            text: response("Content-Length: 2\r\nContent-Length: 3\r\n", "hi!")),
        CorpusEntry(
            family: "Content-Length", name: "two equal",
            text: response("Content-Length: 2\r\nContent-Length: 2\r\n", "hi")),
        CorpusEntry(family: "Content-Length", name: "plus sign", text: response("Content-Length: +2\r\n", "hi")),
        CorpusEntry(
            family: "Content-Length", name: "on a 204",
            text: "HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\nhi" + ok),
        CorpusEntry(
            family: "TE.TE", name: "gzip, chunked",
            text: response("Transfer-Encoding: gzip, chunked\r\n", "2\r\nhi\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "chunked, gzip", text: response("Transfer-Encoding: chunked, gzip\r\n", "hi")),
        CorpusEntry(
            family: "TE.TE", name: "xchunked", text: response("Transfer-Encoding: xchunked\r\n", "2\r\nhi\r\n0\r\n\r\n")
        ),
        CorpusEntry(family: "chunk-size", name: "0x prefix", text: chunked("0x2\r\nhi\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "space after", text: chunked("2 \r\nhi\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "name=value", text: chunked("2;a=b\r\nhi\r\n0\r\n\r\n")),
        CorpusEntry(family: "bare LF", name: "every line", text: "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"),
        CorpusEntry(family: "bare CR", name: "in a value", text: response("X: a\rb\r\nContent-Length: 2\r\n", "hi")),
        CorpusEntry(
            family: "obs-fold", name: "folded value", text: response("X: a\r\n b\r\nContent-Length: 2\r\n", "hi")),
        CorpusEntry(
            family: "whitespace before colon", name: "Content-Length", text: response("Content-Length : 2\r\n", "hi")),
        CorpusEntry(
            family: "status line", name: "three-digit status only",
            text: "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n"),
        CorpusEntry(family: "status line", name: "HTTP/2.0", text: "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"),
    ]
}
