import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

@Suite("Authority: host[:port] taken apart in one place")
struct AuthorityTests {
    @Test(
        "split keeps an IPv6 literal's brackets and finds the port after the host",
        arguments: [
            ("localhost", "localhost", nil),
            ("localhost:8080", "localhost", "8080"),
            ("127.0.0.1:", "127.0.0.1", ""),
            ("[::1]", "[::1]", nil),
            ("[::1]:8080", "[::1]", "8080"),
            ("a:b:c", "a:b", "c"),
        ] as [(String, String, String?)])
    func split(_ text: String, host: String, port: String?) throws {
        let parts = try #require(Authority.split(Substring(text)))
        #expect(parts.host == Substring(host))
        #expect(parts.port.map(String.init) == port)
    }

    @Test(
        "split refuses an unclosed bracket or something after it but a port", arguments: ["[::1", "[::1]x", "[::1]]:1"])
    func splitRefuses(_ text: String) {
        #expect(Authority.split(Substring(text)) == nil)
    }

    @Test(
        "a port is 1 to 5 digits, at most 65535: no sign, no space, no hex",
        arguments: [
            ("0", 0), ("80", 80), ("65535", 65535), ("65536", nil), ("+80", nil), (" 80", nil), ("8o", nil),
            ("", nil), ("000080", nil), ("0x50", nil),
        ] as [(String, Int?)])
    func port(_ text: String, value: Int?) {
        #expect(Authority.port(Substring(text)) == value)
    }

    @Test("brackets come off an IPv6 literal only, and go on one only")
    func brackets() {
        #expect(Authority.unbracketed("[::1]") == "::1")
        #expect(Authority.unbracketed("example.com") == "example.com")
        #expect(Authority.bracketed("::1") == "[::1]")
        #expect(Authority.bracketed("example.com") == "example.com")
    }

    @Test(
        "the Host check's name: the port comes off only when it is one; anything else is compared whole",
        arguments: [
            ("localhost:8080", "localhost"), ("[::1]:8080", "[::1]"), ("[::1]", "[::1]"),
            ("localhost:x", "localhost:x"), ("[::1]x", "[::1]x"),
            ("evil.com:8080@localhost", "evil.com:8080@localhost"),
        ])
    func hostWithoutPort(_ value: String, name: String) {
        #expect(RequestGuard.hostWithoutPort(Substring(value)) == Substring(name))
    }

    /// RFC 3986 §3.2.3's port as the standard library reads digits: 1 to 5 ASCII digits, at most 65535.
    static func portOracle(_ text: Substring) -> Int? {
        guard (1...5).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text).flatMap { $0 <= 65535 ? $0 : nil }
    }

    static let corpus = [
        "localhost", "localhost:8080", "127.0.0.1:", "[::1]", "[::1]:8080", "a:b:c", "[::1", "[::1]x", "[::1]]:1", "",
        ":", ":80", "[]", "[]:80", "[::1]:", "h:65535", "h:65536", "h:+1", "%41:1", "%4:1", "a b", "x:000080", "[g]",
        "[1.2.3.4]", "127.0?0.1", "LOCALHOST:1", "host:x",
    ]

    @Test("the byte-level split, port and validity read each authority as the Substring ones do, at any offset")
    func bytesAgree() {
        for text in Self.corpus {
            // Embedded in a longer string, so the Substring does not start at its string's start.
            let whole = "Host: " + text + "##"
            let sub = whole.dropFirst(6).dropLast(2)
            let offsets = Authority.splitOffsets(sub.utf8.span)
            let parts = Authority.split(sub)
            #expect((offsets == nil) == (parts == nil), "\(text)")
            if let offsets, let parts {
                #expect(offsets.hostEnd == parts.host.utf8.count, "\(text)")
                #expect(offsets.portStart.map { sub.utf8.count - $0 } == parts.port?.utf8.count, "\(text)")
                #expect(
                    offsets.portStart.flatMap { Authority.port(sub.utf8.span, from: $0) }
                        == parts.port.flatMap(Self.portOracle), "\(text)")
            }
            #expect(sub == Substring(text))
            #expect(Authority.isValid(sub) == Authority.isValid(Substring(text)), "\(text)")
        }
        #expect(Authority.isValid("127.0.0.1:18093"))
        #expect(Authority.isValid("[::1]:80"))
        #expect(!Authority.isValid("[]:80"))
        #expect(!Authority.isValid("127.0?0.1"))
        #expect(!Authority.isValid("host:"))
        #expect(!Authority.isValid("%4:1"))
    }

    @Test("the Host allow-list's fast path: the usual names at any offset, any case, with or without a port")
    func allowedAtAnyOffset() {
        let check = RequestGuard(policy: SafetyPolicy())
        for (value, allowed) in [
            ("127.0.0.1:18093", true), ("LOCALHOST", true), ("localhost:x", false), ("127.0.0.1:99999", false),
            ("[::1]:80", true), ("localhost.evil.com", false), ("evil.com:8080@localhost", false),
        ] {
            let whole = "x" + value + "y"
            #expect(check.isAllowed(host: whole.dropFirst().dropLast()) == allowed, "\(value)")
        }
    }
}
