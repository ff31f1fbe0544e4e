/// The published smuggling classes the first corpus lacked (issue #24 condition 2: "mutations should also start from
/// a corpus of the known smuggling families"), each list citing where its class comes from, and the product's own
/// hostile requests that were not in it yet. Families keep the names of ``SmugglingCorpus``'s where one fits, so the
/// tallies stay comparable; three are new: "chunk line ends", "version" and "hostile".
extension SmugglingCorpus {
    static let published: [CorpusEntry] =
        teObfuscations + contentLengthForms + expectForms + chunkLineEnds + chunkSizeForms + chunkExtensionForms
        + trailerForms + hostForms + versionForms + upgradeTails + hostile

    /// James Kettle (PortSwigger Research), "HTTP Desync Attacks: Request Smuggling Reborn" (2019): the ways to hide
    /// `Transfer-Encoding: chunked` from one parser and not another (TE.TE), each beside a Content-Length that a
    /// parser which misses the TE would frame by; and RFC 9112 §7.1's "parameters on chunked SHOULD be an error".
    static let teObfuscations: [CorpusEntry] = [
        CorpusEntry(
            family: "TE.TE", name: "TE behind a bare LF",
            text: post("X: x\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "LF between the name and the colon",
            text: post("Transfer-Encoding\n : chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "TE folded onto the line before",
            text: post("X: x\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "identity, then chunked in a second field",
            text: post("Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "chunked, chunked",
            text: post("Transfer-Encoding: chunked, chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(family: "TE.TE", name: "quoted", text: post("Transfer-Encoding: \"chunked\"\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "an empty element first", text: post("Transfer-Encoding: ,chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "vertical tab before", text: post("Transfer-Encoding:\u{B}chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "form feed after", text: post("Transfer-Encoding: chunked\u{C}\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "a parameter on chunked",
            text: post("Transfer-Encoding: chunked;q=1\r\nContent-Length: 5\r\n", "0\r\n\r\n")),
        CorpusEntry(
            family: "TE.TE", name: "the name in upper case",
            text: post("TRANSFER-ENCODING: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n")),
    ]

    /// Duplicate and conflicting Content-Length (RFC 9112 §6.3 rule 5; Kettle 2019's CL.CL; the HTTP Garden's
    /// digit forms): what one parser merges, another refuses or reads otherwise.
    static let contentLengthForms: [CorpusEntry] = [
        CorpusEntry(
            family: "Content-Length", name: "two, in different case",
            text: post("Content-Length: 3\r\ncontent-length: 4\r\n", "abcd")),
        CorpusEntry(
            family: "Content-Length", name: "an empty one, then one",
            text: post("Content-Length:\r\nContent-Length: 3\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "an underscore", text: post("Content-Length: 1_0\r\n", "abc")),
        CorpusEntry(family: "Content-Length", name: "a tab before", text: post("Content-Length:\t3\r\n", "abc")),
        CorpusEntry(
            family: "Content-Length", name: "a vertical tab after", text: post("Content-Length: 3\u{B}\r\n", "abc")),
        CorpusEntry(
            family: "Content-Length", name: "16 digits", text: post("Content-Length: 0000000000000003\r\n", "abc")),
    ]

    /// Kettle (PortSwigger Research), "Browser-Powered Desync Attacks" (2022, CL.0: a server that ignores the body's
    /// length) and "HTTP/1.1 must die" (2025: obfuscated `Expect`, where a parser that sees 100-continue waits and one
    /// that does not reads the body as the next request).
    static let expectForms: [CorpusEntry] = [
        CorpusEntry(
            family: "expect", name: "obfuscated: y 100-continue",
            text: post("Content-Length: 3\r\nExpect: y 100-continue\r\n", "abc")),
        CorpusEntry(
            family: "expect", name: "folded 100-continue",
            text: post("Content-Length: 3\r\nExpect:\r\n 100-continue\r\n", "abc")),
        CorpusEntry(
            family: "expect", name: "100-Continue in mixed case",
            text: post("Content-Length: 3\r\nExpect: 100-Continue\r\n", "abc")),
        CorpusEntry(
            family: "expect", name: "on a GET with no body",
            text: "GET /api/g HTTP/1.1\r\n\(host)Expect: 100-continue\r\n\r\n" + get),
        CorpusEntry(
            family: "expect", name: "CL.0: a body on a GET, then a request",
            text: "GET /api/g HTTP/1.1\r\n\(host)Content-Length: \(get.utf8.count)\r\n\r\n" + get),
    ]

    /// Jeppe Bonde Weikop, "Funky chunks: abusing ambiguous chunk line terminators for request smuggling" (2025):
    /// one parser ends a chunk line at a bare LF or CR and another reads on (TERM.EXT, EXT.TERM, and the data's
    /// terminator), so each disagrees on where the next chunk starts.
    static let chunkLineEnds: [CorpusEntry] = [
        CorpusEntry(
            family: "chunk line ends", name: "extension ended by a bare LF, a chunk inside it",
            text: chunked("2;\nxx\r\n3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk line ends", name: "extension holding a bare CR before the CRLF",
            text: chunked("3;a\r\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk line ends", name: "bare CR after the data", text: chunked("3\r\nabc\r0\r\n\r\n")),
        CorpusEntry(
            family: "chunk line ends", name: "CR CR LF after the size", text: chunked("3\r\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk line ends", name: "two bytes too many, then a chunk",
            text: chunked("3\r\nabcXX\r\n5\r\nhello\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk line ends", name: "last chunk ended by LF, CRLF", text: chunked("0\n\r\n")),
    ]

    /// Ben Kallus et al., "The HTTP Garden: Discovering Parsing Vulnerabilities in HTTP/1.1 Implementations by
    /// Differential Fuzzing of Request Streams" (2024): the chunk-size forms its servers read differently.
    static let chunkSizeForms: [CorpusEntry] = [
        CorpusEntry(family: "chunk-size", name: "an underscore", text: chunked("1_0\r\n0123456789abcdef\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "0X prefix", text: chunked("0X3\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-size", name: "NUL after", text: chunked("3\u{0}\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-size", name: "16 digits, zero-padded", text: chunked("0000000000000003\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-size", name: "a tab before the extension", text: chunked("3\t;a\r\nabc\r\n0\r\n\r\n")),
    ]

    /// The HTTP Garden's chunk-extension classes, and the catalogue of Http11Probe's smuggling tests
    /// (SMUG-CHUNK-EXT-*): what a quoted string may hold, whitespace around `=`, and an extension long enough to
    /// exhaust a server that buffers it.
    static let chunkExtensionForms: [CorpusEntry] = [
        CorpusEntry(
            family: "chunk-extension", name: "bare CR in a quoted value",
            text: chunked("3;a=\"b\rc\"\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-extension", name: "bare LF in a quoted value",
            text: chunked("3;a=\"b\nc\"\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-extension", name: "an escaped quote", text: chunked("3;a=\"b\\\"c\"\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-extension", name: "unterminated quote", text: chunked("3;a=\"bc\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(family: "chunk-extension", name: "spaces around =", text: chunked("3;a = b\r\nabc\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "chunk-extension", name: "8 KiB long",
            text: chunked("3;a=" + String(repeating: "x", count: 8192) + "\r\nabc\r\n0\r\n\r\n")),
    ]

    /// The HTTP Garden's trailer classes: fields RFC 9110 §6.5.1 forbids as trailers, and trailer line ends.
    static let trailerForms: [CorpusEntry] = [
        CorpusEntry(
            family: "trailers", name: "Transfer-Encoding in the trailers",
            text: chunked("3\r\nabc\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n")),
        CorpusEntry(
            family: "trailers", name: "Host in the trailers",
            text: chunked("3\r\nabc\r\n0\r\nHost: evil.example\r\n\r\n")),
        CorpusEntry(family: "trailers", name: "bare LF after a trailer", text: chunked("3\r\nabc\r\n0\r\nX: a\n\r\n")),
        CorpusEntry(family: "trailers", name: "a trailer without a colon", text: chunked("3\r\nabc\r\n0\r\nX\r\n\r\n")),
    ]

    /// The HTTP Garden's Host classes (RFC 9112 §3.2, RFC 9110 §7.2): what a router and an upstream may take for
    /// different authorities.
    static let hostForms: [CorpusEntry] = [
        CorpusEntry(family: "Host", name: "empty", text: "GET /api/g HTTP/1.1\r\nHost:\r\n\r\n"),
        CorpusEntry(family: "Host", name: "userinfo", text: "GET /api/g HTTP/1.1\r\nHost: user@{HOST}\r\n\r\n"),
        CorpusEntry(family: "Host", name: "a space inside", text: "GET /api/g HTTP/1.1\r\nHost: {HOST} x\r\n\r\n"),
        CorpusEntry(
            family: "Host", name: "two in one field", text: "GET /api/g HTTP/1.1\r\nHost: {HOST}, evil.example\r\n\r\n"),
        CorpusEntry(
            family: "Host", name: "absolute-form naming another authority",
            text: "GET http://evil.example/api/g HTTP/1.1\r\n\(host)\r\n"),
    ]

    /// The HTTP Garden's version classes (RFC 9112 §2.3: `HTTP/` DIGIT "." DIGIT, case-sensitive).
    static let versionForms: [CorpusEntry] = [
        CorpusEntry(family: "version", name: "HTTP/1.10", text: "GET /api/g HTTP/1.10\r\n\(host)\r\n"),
        CorpusEntry(family: "version", name: "HTTP/01.1", text: "GET /api/g HTTP/01.1\r\n\(host)\r\n"),
        CorpusEntry(family: "version", name: "a byte after", text: "GET /api/g HTTP/1.1x\r\n\(host)\r\n"),
        CorpusEntry(family: "version", name: "a space inside", text: "GET /api/g HTTP/ 1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "version", name: "HTTP/1", text: "GET /api/g HTTP/1\r\n\(host)\r\n"),
        CorpusEntry(family: "version", name: "HTTP/0.9 request line", text: "GET /api/g\r\n"),
    ]

    /// What follows a request that switches protocols or opens a tunnel (RFC 9110 §7.8, §9.3.6; RFC 9113 §3.4's
    /// preface; WebSocketEarlyBytesTests): bytes that one parser reads as the next request and another as the tunnel's.
    static let upgradeTails: [CorpusEntry] = [
        CorpusEntry(
            family: "upgrade", name: "HTTP/2 preface as a request", text: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + get),
        CorpusEntry(
            family: "upgrade", name: "CONNECT, then tunnel bytes",
            text: "CONNECT {HOST} HTTP/1.1\r\n\(host)\r\n\u{16}\u{3}\u{1}\u{0}\u{5}hello" + get),
        CorpusEntry(
            family: "upgrade", name: "upgrade on HTTP/1.0, then a request",
            text: "GET /api/ws HTTP/1.0\r\n\(host)Connection: upgrade\r\nUpgrade: websocket\r\n\r\n" + get),
        CorpusEntry(
            family: "upgrade", name: "chunked upgrade, then frames",
            text: post(
                "Transfer-Encoding: chunked\r\nConnection: upgrade\r\nUpgrade: websocket\r\n", "3\r\nabc\r\n0\r\n\r\n")
                + "\u{81}\u{05}hello"),
        CorpusEntry(
            family: "upgrade", name: "upgrade with Connection: close too",
            text: "GET /api/ws HTTP/1.1\r\n\(host)Connection: upgrade, close\r\nUpgrade: websocket\r\n\r\n" + get),
    ]

    static let smuggled = "GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"

    /// The product's own hostile requests (Tests/BearerProxyTests/Safety/HostileRequestTests.swift,
    /// Attacks/SmugglingTests.swift; `Corpus.hostile` of bench/floor/Fuzzing) that no entry above already is.
    static let hostile: [CorpusEntry] = [
        CorpusEntry(
            family: "hostile", name: "Connection: content-length",
            text: "GET /api/g HTTP/1.1\r\n\(host)Connection: content-length\r\n\r\n"),
        CorpusEntry(
            family: "hostile", name: "Connection: Transfer-Encoding",
            text: "GET /api/g HTTP/1.1\r\n\(host)Connection: Transfer-Encoding\r\n\r\n"),
        CorpusEntry(
            family: "hostile", name: "Connection: host, in a list",
            text: "GET /api/g HTTP/1.1\r\n\(host)Connection: keep-alive, host\r\n\r\n"),
        CorpusEntry(
            family: "hostile", name: "Connection: authorization",
            text: "GET /api/g HTTP/1.1\r\n\(host)Connection: \tAuthorization \r\nAuthorization: Basic eA==\r\n\r\n"),
        CorpusEntry(
            family: "hostile", name: "Connection: x-request-id",
            text: "GET /api/g HTTP/1.1\r\n\(host)Connection: x-request-id\r\nX-Request-Id: client\r\n\r\n"),
        CorpusEntry(
            family: "hostile", name: "identity, chunked",
            text: post("Transfer-Encoding: identity, chunked\r\n", "0\r\n\r\n")),
        CorpusEntry(family: "hostile", name: "foreign Host", text: "GET /api/g HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
        CorpusEntry(family: "hostile", name: "dot-dot", text: "GET /api/../admin HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(
            family: "hostile", name: "encoded CR LF", text: "GET /api/a%0d%0aSet-Cookie:x HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(family: "hostile", name: "TRACE", text: "TRACE /api/g HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(
            family: "hostile", name: "request target over 8 KiB",
            text: "GET /api/" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\(host)\r\n"),
        CorpusEntry(
            family: "hostile", name: "over 100 header fields",
            text: "GET /api/g HTTP/1.1\r\n\(host)" + (1...120).map { "X-H\($0): v\r\n" }.joined() + "\r\n"),
        CorpusEntry(
            family: "hostile", name: "a request smuggled in a chunked body",
            text: chunked(String(smuggled.utf8.count, radix: 16) + "\r\n\(smuggled)\r\n0\r\n\r\n")),
        CorpusEntry(
            family: "hostile", name: "trailers carrying credentials",
            text: post(
                "Transfer-Encoding: chunked\r\nTrailer: Authorization\r\n",
                "5\r\nhello\r\n0\r\nAuthorization: Bearer client-chosen\r\nX-Forwarded-Host: evil.example\r\n\r\n")),
        CorpusEntry(
            family: "hostile", name: "UTF-8 value",
            text:
                "GET /api/g HTTP/1.1\r\n\(host)X-Data: caf\u{C3}\u{A9} \u{E2}\u{82}\u{AC} \u{F0}\u{9F}\u{98}\u{80}\r\n\r\n"
        ),
    ]
}
