import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerOperations
import BearerRuntime
import BearerSignIn
import BearerTelemetry
import BearerTokens
import Testing

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
}
