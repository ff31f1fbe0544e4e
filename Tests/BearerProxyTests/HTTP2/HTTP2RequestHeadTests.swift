import NIOCore
import NIOHPACK
import Testing

@testable import BearerDataPlane

/// The translation of an HTTP/2 request's header section into the HTTP/1.1 head the client connection reads
/// (RFC 9113 §8.3.1), and the refusals that keep a client from smuggling a field line or a request through it.
@Suite("HTTP/2 request heads as HTTP/1.1 heads")
struct HTTP2RequestHeadTests {
    static func headers(_ fields: [(String, String)]) -> HPACKHeaders {
        HPACKHeaders(fields)
    }

    static let base = [
        (":method", "GET"), (":scheme", "http"), (":path", "/api/x?y=1"), (":authority", "localhost:8080"),
    ]

    @Test("pseudo-headers make the request line and Host; fields follow in order; cookies are joined with \"; \"")
    func translation() throws {
        let head = try HTTP2RequestHead.translate(
            Self.headers(Self.base + [("accept", "*/*"), ("cookie", "a=1"), ("x-b", "2"), ("cookie", "c=3")]),
            endStream: true)
        #expect(
            String(buffer: head.bytes)
                == "GET /api/x?y=1 HTTP/1.1\r\nhost: localhost:8080\r\naccept: */*\r\nx-b: 2\r\ncookie: a=1; c=3\r\n\r\n"
        )
        #expect(head.body == .none)
        #expect(!head.isHead)
    }

    @Test("a body without content-length goes in chunks; with one, as it is; a HEAD is known")
    func framing() throws {
        let chunked = try HTTP2RequestHead.translate(Self.headers(Self.base), endStream: false)
        #expect(chunked.body == .chunked)
        #expect(String(buffer: chunked.bytes).hasSuffix("transfer-encoding: chunked\r\n\r\n"))
        let length = try HTTP2RequestHead.translate(
            Self.headers(Self.base + [("content-length", "5")]), endStream: false)
        #expect(length.body == .length)
        #expect(!String(buffer: length.bytes).contains("transfer-encoding"))
        var head = Self.base
        head[0] = (":method", "HEAD")
        #expect(try HTTP2RequestHead.translate(Self.headers(head), endStream: true).isHead)
    }

    @Test("Host alone stands for :authority; the same authority in both is taken")
    func host() throws {
        let hostOnly = try HTTP2RequestHead.translate(
            Self.headers(Array(Self.base.prefix(3)) + [("host", "example.test")]), endStream: true)
        #expect(String(buffer: hostOnly.bytes).contains("host: example.test\r\n"))
        let both = try HTTP2RequestHead.translate(
            Self.headers(Self.base + [("host", "LOCALHOST:8080")]), endStream: true)
        #expect(String(buffer: both.bytes).components(separatedBy: "\r\nhost: ").count == 2)
    }

    static let malformed: [(String, [(String, String)])] = [
        ("CR LF in a value", base + [("x-a", "1\r\nx-b: 2")]),
        ("LF in a value", base + [("x-a", "1\nx-b: 2")]),
        ("NUL in a value", base + [("x-a", "1\u{0}")]),
        ("a leading space", base + [("x-a", " 1")]),
        ("a trailing tab", base + [("x-a", "1\t")]),
        ("an uppercase name", base + [("X-A", "1")]),
        ("a colon in a name", base + [("x:a", "1")]),
        ("connection", base + [("connection", "keep-alive")]),
        ("transfer-encoding", base + [("transfer-encoding", "chunked")]),
        ("upgrade", base + [("upgrade", "websocket")]),
        ("keep-alive", base + [("keep-alive", "5")]),
        ("proxy-connection", base + [("proxy-connection", "close")]),
        ("te: gzip", base + [("te", "gzip")]),
        ("host differs", base + [("host", "other")]),
        ("Host twice beside :authority", base + [("host", "localhost:8080"), ("host", "localhost:8080")]),
        ("Host twice without :authority", Array(base.prefix(3)) + [("host", "a.test"), ("host", "b.test")]),
        ("CONNECT whose host differs", [(":method", "CONNECT"), (":authority", "a.test:443"), ("host", "b.test")]),
        ("a pseudo-header after a field", [(":method", "GET"), ("x-a", "1"), (":path", "/"), (":scheme", "http")]),
        ("two paths", base + [(":path", "/again")]),
        ("no method", Array(base.dropFirst())),
        ("no path", [(":method", "GET"), (":scheme", "http")]),
        ("an empty path", [(":method", "GET"), (":scheme", "http"), (":path", "")]),
        ("a space in the path", [(":method", "GET"), (":scheme", "http"), (":path", "/a b HTTP/1.1\r\nx: y")]),
        ("a space in the method", [(":method", "GET /x"), (":scheme", "http"), (":path", "/")]),
        ("a response's pseudo-header", base + [(":status", "200")]),
        ("another scheme", [(":method", "GET"), (":scheme", "ftp"), (":path", "/")]),
        ("a space in :authority", [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "a b")]),
        ("CONNECT without :authority", [(":method", "CONNECT")]),
        ("an absolute :path", [(":method", "GET"), (":scheme", "http"), (":path", "http://evil.example/x")]),
        ("* for GET", [(":method", "GET"), (":scheme", "http"), (":path", "*")]),
    ]

    @Test("malformed header sections are refused before a byte is written", arguments: malformed.map(\.0))
    func refused(name: String) throws {
        let fields = try #require(Self.malformed.first { $0.0 == name }?.1)
        #expect(throws: HTTP2RequestHead.Malformed.self, "\(name)") {
            try HTTP2RequestHead.translate(Self.headers(fields), endStream: true)
        }
    }

    @Test("OPTIONS * is the one request whose :path is not a path")
    func optionsAsterisk() throws {
        let head = try HTTP2RequestHead.translate(
            Self.headers([(":method", "OPTIONS"), (":scheme", "http"), (":path", "*"), (":authority", "a")]),
            endStream: true)
        #expect(String(buffer: head.bytes).hasPrefix("OPTIONS * HTTP/1.1\r\n"))
    }

    @Test("content-length on a stream that ended with its head is refused unless it is 0")
    func lengthWithoutData() throws {
        #expect(throws: HTTP2RequestHead.Malformed.self) {
            try HTTP2RequestHead.translate(Self.headers(Self.base + [("content-length", "5")]), endStream: true)
        }
        _ = try HTTP2RequestHead.translate(Self.headers(Self.base + [("content-length", "0")]), endStream: true)
    }

    @Test("CONNECT is written as CONNECT, for the HTTP/1.1 side to refuse as it refuses its own")
    func connect() throws {
        let head = try HTTP2RequestHead.translate(
            Self.headers([(":method", "CONNECT"), (":authority", "example.test:443")]), endStream: false)
        #expect(String(buffer: head.bytes) == "CONNECT example.test:443 HTTP/1.1\r\nhost: example.test:443\r\n\r\n")
    }

    @Test("the preface decides HTTP/2; a prefix of it waits; anything else is HTTP/1.1")
    func preface() {
        let preface = ByteBuffer(bytes: HTTP2PrefaceDetector.preface)
        #expect(HTTP2PrefaceDetector.verdict(preface) == .http2)
        var longer = preface
        longer.writeString("\u{0}\u{0}\u{0}\u{4}")
        #expect(HTTP2PrefaceDetector.verdict(longer) == .http2)
        #expect(HTTP2PrefaceDetector.verdict(ByteBuffer(string: "PRI * HTTP/2")) == .undecided)
        #expect(HTTP2PrefaceDetector.verdict(ByteBuffer(string: "P")) == .undecided)
        #expect(HTTP2PrefaceDetector.verdict(ByteBuffer(string: "PRI * HTTP/2.0\r\nHost: x\r\n\r\n")) == .http1)
        #expect(HTTP2PrefaceDetector.verdict(ByteBuffer(string: "GET / HTTP/1.1\r\n")) == .http1)
        #expect(HTTP2PrefaceDetector.verdict(ByteBuffer(string: "POST")) == .http1)
    }
}
