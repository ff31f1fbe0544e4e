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

/// The small building blocks: JSON paths, spelling hints, host syntax.
@Suite struct ConfigurationSyntaxTests {
    @Test func jsonPathsPrintTheWayProblemsNameThem() {
        #expect(JSONPath.root.description == "$")
        #expect(JSONPath.root.key("listen").description == "listen")
        #expect(JSONPath.root.key("routes").index(3).key("prefix").description == "routes[3].prefix")
        #expect(JSONPath.root.key("h").key("X-Tenant_1").description == "h.X-Tenant_1")
        #expect(JSONPath.root.key("h").key("a b\"\n").description == #"h["a b\"\u000a"]"#)
        #expect(JSONPath.root.key("").description == #"$[""]"#)
        #expect(JSONPath.root.index(0).description == "$[0]")
    }

    @Test(arguments: [
        ("scope", ["scopes", "prefix"], "scopes"),
        ("clientID", ["clientId", "clientCapabilities"], "clientId"),
        ("upstrem", ["upstream"], "upstream"),
        ("timeout", ["timeoutSeconds", "tls"], "timeoutSeconds"),
        ("microsoft", ["microsoft.com", "password"], "microsoft.com"),
        ("preifx", ["prefix"], "prefix"),
    ])
    func suggestsTheIntendedName(typed: String, candidates: [String], expected: String) {
        #expect(SpellingSuggestion.closest(to: typed, among: candidates) == expected)
    }

    @Test func suggestsNothingForUnrelatedNames() {
        #expect(SpellingSuggestion.closest(to: "colour", among: ["listen", "routes", "account"]) == nil)
        #expect(SpellingSuggestion.closest(to: "x", among: ["tls"]) == nil)
    }

    @Test(arguments: ["localhost", "127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])
    func loopbackHosts(host: String) {
        #expect(HostName.isLoopback(host))
    }

    @Test(arguments: [
        "localhost.evil.com", "0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::2", "::ffff:10.0.0.1", "127.1",
    ])
    func nonLoopbackHosts(host: String) {
        #expect(!HostName.isLoopback(host))
    }

    @Test func parsesIPv6() {
        #expect(HostName.ipv6Groups("::") == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(HostName.ipv6Groups("2001:db8::8:800:200c:417a") == [0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a])
        #expect(HostName.ipv6Groups("::ffff:192.0.2.1") == [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201])
        #expect(HostName.ipv6Groups("1:2:3:4:5:6:7:8") == [1, 2, 3, 4, 5, 6, 7, 8])
        for invalid in [
            "1:2:3:4:5:6:7", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "fe80::1%eth0", ":1", "1:", "1:2:3:4:5:6:7::8",
        ] {
            #expect(HostName.ipv6Groups(Substring(invalid)) == nil, "\(invalid)")
        }
    }

    @Test func validatesNames() {
        for valid in ["localhost", "api.example.com", "my_host.internal", "a-b.c", "xn--bcher-kva.example"] {
            #expect(HostName.isValidName(Substring(valid)), "\(valid)")
        }
        for invalid in ["", "-a.com", "a-.com", "a..b", "a.b.", "a b", "127.1", "0x7f.1", "1.2.3", "ex!ample.com"] {
            #expect(!HostName.isValidName(Substring(invalid)), "\(invalid)")
        }
    }

    @Test(
        "an authority's host is checked and lowercased without brackets, its port read by Authority.port",
        arguments: [
            ("Example.COM", "example.com", nil), ("example.com:8080", "example.com", 8080),
            ("127.0.0.1:0", "127.0.0.1", 0), ("[::1]", "::1", nil), ("[2001:DB8::1]:443", "2001:db8::1", 443),
        ] as [(String, String, Int?)])
    func takesAuthoritiesApart(text: String, host: String, port: Int?) throws {
        let parts = try HostName.authority(Substring(text))
        #expect(parts.host == host)
        #expect(parts.port == port)
    }

    @Test(
        "an authority names what is wrong with it: the host missing, the host invalid, or the port invalid",
        arguments: [
            ("", HostName.AuthorityProblem.missingHost), (":80", .missingHost), ("::1:80", .invalidHost),
            ("[::1", .invalidHost), ("[::1]x", .invalidHost), ("[localhost]:80", .invalidHost),
            ("127.1:80", .invalidHost), ("bad_host!", .invalidHost), ("x.example:", .invalidPort),
            ("x.example:65536", .invalidPort), ("[::1]:+80", .invalidPort),
        ])
    func refusesAuthorities(text: String, problem: HostName.AuthorityProblem) {
        #expect(throws: problem) { try HostName.authority(Substring(text)) }
    }
}
