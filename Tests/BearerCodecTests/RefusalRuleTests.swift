import Testing

@testable import BearerCodec

/// One input per refusal rule of the codec that no other test pins down (issue #24 condition 6): each is refused
/// for its reason by the codec, and accepted — or refused for another reason, or waited on — once that one rule is
/// switched off. `Tests/mutants/run.sh` switches each rule off in turn and checks that a test fails; the rules that
/// `HeadParserTests` already covers are not repeated here. Each case names the rule, as its site says it.
@Suite("BearerCodec: every refusal rule is needed")
struct RefusalRuleTests {
    /// An input, the refusal it must get, and the limits it is parsed with.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var rule: String
        var input: String
        var refusal: HeadError
        var limits = HeadLimits()
        /// For a response: whether the request it answers asked to upgrade.
        var upgradeRequested = false

        var testDescription: String { rule }

        init(
            _ rule: String, _ input: String, _ refusal: HeadError, limits: HeadLimits = HeadLimits(),
            upgradeRequested: Bool = false
        ) {
            self.rule = rule
            self.input = input
            self.refusal = refusal
            self.limits = limits
            self.upgradeRequested = upgradeRequested
        }
    }

    static let small = HeadLimits(headBytes: 64, targetBytes: 8, fields: 2)

    static let requests: [Refusal] = [
        // HeadScanner: the limit and the field line.
        Refusal(
            "a head longer than the limit", "GET / HTTP/1.1\r\nHost: a\r\nX: \(bytes(64))", .headTooLarge, limits: small
        ),
        Refusal(
            "a CR at a field line's start without its LF", "GET / HTTP/1.1\r\nHost: a\r\n\rX: b\r\n\r\n",
            .malformed(.bareCR)),
        Refusal("an LF at a field line's start", "GET / HTTP/1.1\r\nHost: a\r\n\nX: b\r\n\r\n", .malformed(.bareLF)),
        // With each of the next three off, the field is still read, with a value the line did not mean.
        Refusal(
            "whitespace before a colon", "GET / HTTP/1.1\r\nHost: a\r\nX : b\r\n\r\n", .malformed(.spaceBeforeColon)),
        Refusal(
            "a field name with a byte outside tchar", "GET / HTTP/1.1\r\nHost: a\r\nX/: b\r\n\r\n",
            .malformed(.fieldName)),
        Refusal("an LF inside a field value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\nY: b\r\n\r\n", .malformed(.bareLF)),
        Refusal("an empty field name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", .malformed(.fieldName)),
        // HeadScanner.version and lineEnd.
        Refusal("a version's major that is not a digit", "GET / HTTP/x.1\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("a version without its dot", "GET / HTTP/1x1\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("a version's minor that is not a digit", "GET / HTTP/1.x\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("a start line that does not end in CR", "GET / HTTP/1.1 \nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("a start line's CR without its LF", "GET / HTTP/1.1\rxHost: a\r\n\r\n", .malformed(.bareCR)),
        // RequestHead.parse.
        Refusal(
            "more fields than the limit", "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nY: 2\r\n\r\n", .headTooLarge,
            limits: small),
        Refusal(
            "Connection naming Host", "GET / HTTP/1.1\r\nHost: a\r\nConnection: host\r\n\r\n", .malformed(.connection)),
        Refusal(
            "Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed(.transferEncoding)),
        Refusal("an empty Host", "GET / HTTP/1.1\r\nHost: \r\n\r\n", .malformed(.host)),
        Refusal("a Host byte outside uri-host and port", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", .malformed(.host)),
        // HeadScanner.method.
        Refusal(
            "an empty line before the request, LF alone", "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            .malformed(.leadingEmptyLine)),
        Refusal("a method token longer than any known, before its end arrives", "PROPPATCHPROPPATCH", .unknownMethod),
        Refusal("a method followed by a tab", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("an empty method", " / HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestLine)),
        Refusal("CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", .methodNotAllowed),
        // HeadScanner.requestTarget and checkAbsoluteForm.
        Refusal(
            "a % without its second hex digit", "GET /a%2x HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal("a % without its first hex digit", "GET /a%G0 HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal(
            "a target longer than the limit", "GET /123456789 HTTP/1.1\r\nHost: a\r\n\r\n", .targetTooLong,
            limits: small),
        Refusal("* longer than one byte", "OPTIONS ** HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal("* for a method other than OPTIONS", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal("a scheme other than http", "GET hxxp://a HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal(
            "an absolute-form without an authority", "GET http:// HTTP/1.1\r\nHost: a\r\n\r\n",
            .malformed(.requestTarget)),
        Refusal(
            "a scheme not followed by a colon", "GET httpx//a HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal("a scheme's colon without //", "GET http:x/a HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal(
            "a scheme's colon with one slash", "GET http:/xa HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        Refusal(
            "an authority that starts with a slash", "GET http:///a HTTP/1.1\r\nHost: a\r\n\r\n",
            .malformed(.requestTarget)),
        Refusal(
            "an authority that starts with ?", "GET http://?a HTTP/1.1\r\nHost: a\r\n\r\n", .malformed(.requestTarget)),
        // FramingFields.
        Refusal(
            "an empty Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n",
            .malformed(.contentLength)),
        Refusal(
            "a Content-Length of more than 15 digits",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0000000000000001\r\n\r\n",
            .malformed(.contentLength)),
        Refusal(
            "a Content-Length that is not digits", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1a\r\n\r\n",
            .malformed(.contentLength)),
        Refusal(
            "a Connection option followed by another without a comma",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: close x\r\n\r\n", .malformed(.connection)),
        Refusal(
            "Connection naming a framing field", "GET / HTTP/1.1\r\nHost: a\r\nConnection: content-length\r\n\r\n",
            .malformed(.connection)),
        Refusal(
            "more Connection options than the limit",
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: a, b, c, d, e, f, g, h, i\r\n\r\n", .malformed(.connection)),
    ]

    @Test("each request refusal rule, for its reason", arguments: requests)
    func requestRule(_ refusal: Refusal) {
        let bytes = Array(refusal.input.utf8)
        #expect(throws: refusal.refusal) { try RequestHead.parse(bytes.span, limits: refusal.limits) }
    }

    static let responses: [Refusal] = [
        Refusal(
            "more fields than the limit", "HTTP/1.1 200 OK\r\nX: 1\r\nY: 2\r\nZ: 3\r\n\r\n", .headTooLarge,
            limits: small),
        Refusal(
            "framing in a 101", "HTTP/1.1 101 S\r\nConnection: upgrade\r\nUpgrade: w\r\nContent-Length: 0\r\n\r\n",
            .malformed(.framingInInformational), upgradeRequested: true),
        Refusal(
            "an HTTP/1.0 101", "HTTP/1.0 101 S\r\nConnection: upgrade\r\nUpgrade: w\r\n\r\n",
            .malformed(.switchingProtocols), upgradeRequested: true),
        Refusal(
            "a 101 without Upgrade", "HTTP/1.1 101 S\r\nConnection: upgrade\r\n\r\n", .malformed(.switchingProtocols),
            upgradeRequested: true),
        Refusal(
            "a 101 with two Upgrade fields",
            "HTTP/1.1 101 S\r\nConnection: upgrade\r\nUpgrade: a\r\nUpgrade: b\r\n\r\n",
            .malformed(.switchingProtocols), upgradeRequested: true),
        Refusal(
            "a 101 whose Connection does not name upgrade", "HTTP/1.1 101 S\r\nUpgrade: w\r\n\r\n",
            .malformed(.switchingProtocols), upgradeRequested: true),
        Refusal("an HTTP/1.0 1xx", "HTTP/1.0 100 Continue\r\n\r\n", .malformed(.informationalClosing)),
        Refusal(
            "a 1xx with Connection: close", "HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\n",
            .malformed(.informationalClosing)),
        Refusal(
            "Transfer-Encoding in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed(.transferEncoding)),
        Refusal(
            "Content-Length with Transfer-Encoding",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed(.contentLengthWithTransferEncoding)),
        Refusal("a version not followed by a space", "HTTP/1.1_200 OK\r\n\r\n", .malformed(.statusLine)),
        Refusal("a status with a byte that is not a digit", "HTTP/1.1 20: OK\r\n\r\n", .malformed(.statusLine)),
        Refusal("a status above 599", "HTTP/1.1 600 X\r\n\r\n", .malformed(.statusLine)),
        Refusal(
            "101 to a request that did not ask to upgrade", "HTTP/1.1 101 Switching Protocols\r\n\r\n",
            .malformed(.statusLine)),
        Refusal("a status followed by neither a space nor CRLF", "HTTP/1.1 200X\r\n\r\n", .malformed(.statusLine)),
        Refusal("a status followed by CR without LF", "HTTP/1.1 200\rX\r\n\r\n", .malformed(.bareCR)),
    ]

    @Test("each response refusal rule, for its reason", arguments: responses)
    func responseRule(_ refusal: Refusal) {
        let bytes = Array(refusal.input.utf8)
        #expect(throws: refusal.refusal) {
            try ResponseHead.parse(
                bytes.span, requestWasHead: false, upgradeRequested: refusal.upgradeRequested, limits: refusal.limits)
        }
    }

    static let chunked: [Refusal] = [
        Refusal("an extension's = without a value", "5;a=\r\nhello\r\n0\r\n\r\n", .malformed(.chunkExtension)),
        Refusal("a space inside an extension's token", "5;a=b c\r\nhello\r\n0\r\n\r\n", .malformed(.chunkExtension)),
        Refusal(
            "a control byte in an extension's quoted string", "5;a=\"\u{1}\"\r\nhello\r\n0\r\n\r\n",
            .malformed(.chunkExtension)),
        Refusal(
            "a control byte after a backslash in a quoted string", "5;a=\"\\\u{1}\"\r\nhello\r\n0\r\n\r\n",
            .malformed(.chunkExtension)),
        Refusal(
            "a byte after an extension's closing quote", "5;a=\"b\"c\r\nhello\r\n0\r\n\r\n", .malformed(.chunkExtension)
        ),
        Refusal("chunk data longer than its size", "5\r\nhelloX\n0\r\n\r\n", .malformed(.chunkData)),
        Refusal("a chunk-size line's CR without its LF", "5\rxhello\r\n0\r\n\r\n", .malformed(.bareCR)),
        Refusal("a chunk's CR without its LF", "5\r\nhello\rx0\r\n\r\n", .malformed(.bareCR)),
        Refusal("a trailer line that starts with neither a name nor CR", "0\r\n:x: y\r\n\r\n", .malformed(.trailer)),
        Refusal("a framing field as a trailer", "0\r\nContent-Length: 5\r\n\r\n", .malformed(.trailer)),
        Refusal("a trailer name with a byte outside tchar", "0\r\nX/: y\r\n\r\n", .malformed(.trailer)),
        Refusal("a trailer line's CR without its LF", "0\r\nX: y\rz\r\n\r\n", .malformed(.bareCR)),
        Refusal("the final CR without its LF", "0\r\n\rx", .malformed(.bareCR)),
        Refusal(
            "a chunk-size line longer than the limit", "5;a\(bytes(4096))\r\nhello\r\n0\r\n\r\n",
            .malformed(.chunkExtension)),
        Refusal("a trailer section longer than the limit", "0\r\nX: \(bytes(4096))\r\n\r\n", .headTooLarge),
    ]

    @Test("each chunked-framing refusal rule, for its reason", arguments: chunked)
    func chunkedRule(_ refusal: Refusal) {
        var chunked = ChunkedBody()
        #expect(throws: refusal.refusal) { try Array(refusal.input.utf8).readChunks(&chunked).get() }
    }

    /// A field value's bytes that are not well-formed UTF-8 (`UTF8Check`, behind the one `.invalidUTF8` refusal):
    /// the forms `HeadParserTests.utf8` does not show.
    struct InvalidUTF8: Sendable, CustomTestStringConvertible {
        var rule: String
        var bytes: [UInt8]

        var testDescription: String { rule }
    }

    static let invalidUTF8: [InvalidUTF8] = [
        InvalidUTF8(rule: "a third byte that is not a continuation", bytes: [0xE2, 0x82, 0x41]),
        InvalidUTF8(rule: "a fourth byte that is not a continuation", bytes: [0xF0, 0x9F, 0x98, 0x41]),
        InvalidUTF8(rule: "an overlong three-byte form", bytes: [0xE0, 0x80, 0x80]),
        InvalidUTF8(rule: "an overlong four-byte form", bytes: [0xF0, 0x80, 0x80, 0x80]),
    ]

    @Test("each UTF-8 rule of a field value", arguments: invalidUTF8)
    func utf8Rule(_ invalid: InvalidUTF8) {
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX: a".utf8) + invalid.bytes + Array("b\r\n\r\n".utf8)
        #expect(throws: HeadError.malformed(.invalidUTF8)) { try RequestHead.parse(bytes.span) }
    }

    /// `count` bytes of `a`.
    static func bytes(_ count: Int) -> String {
        String(repeating: "a", count: count)
    }
}
