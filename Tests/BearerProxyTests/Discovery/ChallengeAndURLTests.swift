import NIOHTTP1
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

/// The pure parts of discovery: challenges, well-known URLs, the resource rule, OAuth URLs and addresses (#25).
@Suite struct ChallengeAndURLTests {
    @Test func everyBearerChallengeIsReadAcrossAndWithinFields() {
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: #"Basic realm="x", Bearer error="invalid_token""#)
        headers.add(
            name: "www-authenticate",
            value: #"DPoP algs="ES256", bearer scope="a b", RESOURCE_METADATA="https://r.example/.well-known/x""#)
        let challenges = BearerChallenge.all(in: headers)
        #expect(challenges.count == 2)
        #expect(challenges[0].error == "invalid_token" && challenges[0].resourceMetadata == nil)
        #expect(challenges[1].scope == "a b")
        #expect(challenges[1].resourceMetadata == "https://r.example/.well-known/x")
        // The replay rule still sees the first challenge.
        #expect(BearerChallenge.find(in: headers)?.error == "invalid_token")
    }

    @Test func aChallengeAfterAToken68IsStillFound() {
        var headers = HTTPHeaders()
        headers.add(name: "www-authenticate", value: #"Negotiate abc==, Bearer resource_metadata="https://r/m""#)
        #expect(BearerChallenge.all(in: headers).map(\.resourceMetadata) == ["https://r/m"])
    }

    @Test(arguments: [
        (
            "https://api.example.com/mcp",
            [
                "https://api.example.com/.well-known/oauth-protected-resource/mcp",
                "https://api.example.com/.well-known/oauth-protected-resource",
            ]
        ),
        ("https://api.example.com:8443", ["https://api.example.com:8443/.well-known/oauth-protected-resource"]),
    ])
    func protectedResourceMetadataURLs(upstream: String, expected: [String]) throws {
        #expect(WellKnownURL.protectedResource(for: try #require(Upstream(parsing: upstream))) == expected)
    }

    @Test(arguments: [
        (
            "https://as.example.com",
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        ),
        (
            "https://as.example.com/",
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        ),
        (
            "https://as.example.com/tenant/v2",
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/v2",
                "https://as.example.com/.well-known/openid-configuration/tenant/v2",
                "https://as.example.com/tenant/v2/.well-known/openid-configuration",
            ]
        ),
    ])
    func authorizationServerMetadataURLsInTheMCPOrder(issuer: String, expected: [String]) throws {
        #expect(WellKnownURL.authorizationServer(issuer: try OAuthURL(issuer, role: "issuer")) == expected)
    }

    @Test(arguments: [
        ("https://api.example.com/mcp", true), ("https://api.example.com/mcp/", true),
        ("https://api.example.com", true), ("https://api.example.com/", true), ("https://API.example.com:443/", true),
        ("https://api.example.com/m", false), ("https://api.example.com/mcp/tools", false),
        ("http://api.example.com/mcp", false), ("https://api.example.com:8443/mcp", false),
        ("https://other.example.com/mcp", false), ("https://api.example.com.evil.example/mcp", false),
        ("https://api.example.com/mcp?x", false), ("https://api.example.com/mcp#f", false),
        ("https://u@api.example.com/mcp", false), ("api.example.com/mcp", false),
        ("https://api.example.com/MCP", false),
    ])
    func resourceMustBeTheUpstreamOrAPrefixOnASegmentBoundary(resource: String, matches: Bool) throws {
        let upstream = try #require(Upstream(parsing: "https://api.example.com/mcp"))
        #expect(ProtectedResourceMetadata.resource(resource, matches: upstream) == matches)
    }

    @Test(
        arguments: [
            ("https://as.example.com/x", nil), ("http://127.0.0.1:9/x", nil), ("http://localhost/x", nil),
            ("http://[::1]/x", nil), ("http://as.example.com/x", "insecure"), ("ftp://as.example.com", "invalid"),
            ("https://u:p@as.example.com", "invalid"), ("https://as.example.com/#f", "invalid"), ("/x", "invalid"),
            // Other spellings of 127.0.0.1 are not host names: refused, never resolved.
            ("https://2130706433/", "invalid"), ("https://0x7f.0.0.1/", "invalid"), ("https://0177.0.0.1/", "invalid"),
            ("https://127.1/", "invalid"), ("https://localhost./", "invalid"),
        ] as [(String, String?)])
    func oauthURLsAreHTTPSOrLoopbackHTTP(url: String, failure: String?) {
        let outcome: String?
        do {
            _ = try OAuthURL(url, role: "token endpoint")
            outcome = nil
        } catch .insecureURL {
            outcome = "insecure"
        } catch {
            outcome = "invalid"
        }
        #expect(outcome == failure)
    }

    @Test(arguments: [
        ("8.8.8.8", IPAddress.Reach.global), ("127.0.0.1", .loopback), ("127.255.0.9", .loopback),
        ("0.0.0.0", .loopback),
        ("10.1.2.3", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("172.32.0.1", .global), ("192.168.1.1", .privateNetwork), ("100.64.0.1", .privateNetwork),
        ("169.254.169.254", .linkLocal), ("224.0.0.1", .privateNetwork), ("255.255.255.255", .privateNetwork),
        ("::1", .loopback), ("::", .loopback), ("fe80::1", .linkLocal), ("fc00::1", .privateNetwork),
        ("fd12:3456::1", .privateNetwork), ("ff02::1", .privateNetwork), ("2606:4700::1111", .global),
        // IPv4 inside IPv6: mapped, compatible, NAT64, 6to4.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:a9fe:a9fe", .linkLocal), ("::ffff:8.8.8.8", .global),
        ("::127.0.0.1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal), ("2002:0a00:0001::", .privateNetwork),
    ])
    func addressReach(address: String, reach: IPAddress.Reach) throws {
        #expect(try #require(IPAddress(literal: address)).reach == reach)
    }

    @Test func namesAreNotLiterals() {
        #expect(IPAddress(literal: "localhost") == nil)
        #expect(IPAddress(literal: "example.com") == nil)
    }
}
