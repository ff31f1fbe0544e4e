import NIOCore
import Testing

@testable import BearerCodec

@Suite("BearerCodec: the grammar of heads and chunked bodies, and its refusals")
struct HeadParserTests {
    static func parse(_ text: String) throws(HeadError) -> RequestHead? {
        try Array(text.utf8).parseRequest().get()
    }

    @Test("the first X-Request-Id's value and the presence of Expect are noted as the fields are scanned")
    func notedFields() throws {
        let text =
            "GET / HTTP/1.1\r\nHost: a\r\nx-REQUEST-id:  first \r\nEXPECT: 100-continue\r\n"
            + "X-Request-Id: second\r\n\r\n"
        let head = try #require(try Self.parse(text))
        let range = try #require(head.requestID)
        #expect(String(decoding: Array(text.utf8)[range], as: UTF8.self) == "first")
        #expect(head.hasExpect)
        let plain = try #require(try Self.parse("GET / HTTP/1.1\r\nHost: a\r\nX-Request-Idx: no\r\nExpec: no\r\n\r\n"))
        #expect(plain.requestID == nil)
        #expect(!plain.hasExpect)
    }

    @Test("the byte classes are the grammar's")
    func byteClasses() {
        let alnum = Set(UInt8(ascii: "0")...UInt8(ascii: "9")).union(UInt8(ascii: "A")...UInt8(ascii: "Z"))
            .union(UInt8(ascii: "a")...UInt8(ascii: "z"))
        let tchar = alnum.union("!#$%&'*+-.^_`|~".utf8)
        let unreservedAndSubDelims = alnum.union("-._~!$&'()*+,;=".utf8)
        let target = unreservedAndSubDelims.union(":@/?%".utf8).union("[]{}|^`".utf8)
        let host = unreservedAndSubDelims.union("%:[]".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ByteClass.isTchar(byte) == tchar.contains(byte), "tchar \(byte)")
            #expect(ByteClass.isTargetByte(byte) == target.contains(byte), "target \(byte)")
            #expect(ByteClass.isHostByte(byte) == host.contains(byte), "host \(byte)")
        }
    }

    @Test(
        "refusals, each for its reason",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", HeadError.malformed(.obsFold)),
            ("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", .malformed(.bareLF)),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", .malformed(.bareCR)),
            ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .malformed(.spaceBeforeColon)),
            (
                "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                .malformed(.duplicateContentLength)
            ),
            (
                "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                .malformed(.contentLengthWithTransferEncoding)
            ),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", .malformed(.transferEncoding)),
            // A tab around a framing value: RFC 9110 allows it, llhttp does not (the long fuzz, session 7).
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\t\r\n\r\n", .malformed(.contentLength)),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\t3\r\n\r\n", .malformed(.contentLength)),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked \t \r\n\r\n", .malformed(.transferEncoding)),
            (
                "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                .malformed(.transferEncoding)
            ),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: \u{0}\r\n\r\n", .malformed(.fieldValue)),
            ("GET / HTTP/1.1\r\nHost: a\r\nX: \u{7F}\r\n\r\n", .malformed(.fieldValue)),
            ("GET / HTTP/1.1\r\nHost: a\r\nX\u{FF}: b\r\n\r\n", .malformed(.fieldName)),
            ("GET /\u{80} HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
            ("GET /a%2 HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
            ("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
            ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion),
            ("GET / HTTP/1.2\r\nHost: a\r\n\r\n", .unsupportedVersion),
            ("GET / http/1.1\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
            ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
            ("FOO / HTTP/1.1\r\nHost: a\r\n\r\n", .unknownMethod),
            ("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.leadingEmptyLine)),
            ("GET / HTTP/1.1\r\n\r\n", .malformed(.host)),
        ] as [(String, HeadError)])
    func refusals(_ input: String, _ expected: HeadError) {
        #expect(throws: expected) { try Self.parse(input) }
    }

    @Test(
        "invalid UTF-8 in a value is refused; well-formed UTF-8 passes",
        arguments: [
            ([0xC3, 0xA9], true), ([0xE2, 0x82, 0xAC], true), ([0xF0, 0x9F, 0x98, 0x80], true), ([0xC3], false),
            ([0xC0, 0xAE], false), ([0xED, 0xA0, 0x80], false), ([0xFF, 0xFE], false), ([0x80, 0x41], false),
            ([0xF4, 0x90, 0x80, 0x80], false),
        ] as [([UInt8], Bool)])
    func utf8(_ bytes: [UInt8], valid: Bool) {
        let input = Array("GET / HTTP/1.1\r\nHost: a\r\nX: a".utf8) + bytes + Array("b\r\n\r\n".utf8)
        let result = input.parseRequest()
        if valid {
            #expect((try? result.get()) != nil)
        } else {
            #expect(throws: HeadError.malformed(.invalidUTF8)) { try result.get() }
        }
    }

    @Test("every prefix of a valid head is incomplete, never refused")
    func prefixes() throws {
        let text = "POST /a?b HTTP/1.1\r\nHost: a:1\r\nX-Y:  v w \r\nTransfer-Encoding: chunked\r\n\r\n"
        for count in 0..<text.utf8.count {
            #expect(try Self.parse(String(text.utf8.prefix(count))!) == nil, "prefix \(count)")
        }
        let head = try #require(try Self.parse(text))
        #expect(head.framing == .chunked)
        #expect(head.length == text.utf8.count)
    }

    @Test("chunked bodies split byte by byte end where they end, with data, framing and trailers apart")
    func chunkedByteByByte() throws {
        let body = Array("4;a=\"b\\\"c\"\r\nwiki\r\n5\r\npedia\r\n0\r\nX-T: 1\r\n\r\nNEXT".utf8)
        var chunked = ChunkedBody()
        var data: [UInt8] = []
        var trailer: [UInt8] = []
        var consumed = 0
        for index in body.indices where !chunked.isComplete {
            for span in try [body[index]].readChunks(&chunked).get() {
                if span.kind == .data { data += span.bytes }
                if span.kind == .trailer { trailer += span.bytes }
                consumed += span.bytes.count
            }
        }
        #expect(chunked.isComplete)
        #expect(String(decoding: data, as: UTF8.self) == "wikipedia")
        #expect(String(decoding: trailer, as: UTF8.self) == "X-T: 1\r\n")
        #expect(consumed == body.count - 4)
    }

    @Test(
        "chunked framing refusals",
        arguments: [
            "5 \r\nhello\r\n0\r\n\r\n", "5;\r\nhello\r\n0\r\n\r\n", "5; a=b\r\nhello\r\n0\r\n\r\n",
            "5\nhello\r\n0\r\n\r\n", "5\r\nhelloX\r\n0\r\n\r\n", "1000000000000000\r\n", "-1\r\n", "0\r\n X: y\r\n\r\n",
            "0\r\nX : y\r\n\r\n", "0\r\nX: \u{1}\r\n\r\n", "\r\n",
        ])
    func chunkedRefusals(_ text: String) {
        var chunked = ChunkedBody()
        #expect(throws: HeadError.self) { try Array(text.utf8).readChunks(&chunked).get() }
    }
}
