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

@Suite struct UpstreamTests {
    @Test(arguments: [
        (
            "https://graph.microsoft.com/v1.0", Upstream.Scheme.https, "graph.microsoft.com", 443, "/v1.0",
            "graph.microsoft.com"
        ),
        ("https://Graph.Microsoft.COM/v1.0/", .https, "graph.microsoft.com", 443, "/v1.0", "graph.microsoft.com"),
        ("https://api.contoso.com", .https, "api.contoso.com", 443, "", "api.contoso.com"),
        ("https://api.contoso.com/", .https, "api.contoso.com", 443, "", "api.contoso.com"),
        ("https://api.contoso.com:443//", .https, "api.contoso.com", 443, "", "api.contoso.com"),
        ("http://127.0.0.1:8080/-/echo/api1", .http, "127.0.0.1", 8080, "/-/echo/api1", "127.0.0.1:8080"),
        ("http://localhost", .http, "localhost", 80, "", "localhost"),
        ("http://[::1]:9000/a%2Fb/", .http, "::1", 9000, "/a%2Fb", "[::1]:9000"),
        ("HTTPS://[2001:DB8::1]", .https, "2001:db8::1", 443, "", "[2001:db8::1]"),
        ("https://api.contoso.com:8443/x/y", .https, "api.contoso.com", 8443, "/x/y", "api.contoso.com:8443"),
    ])
    func parses(text: String, scheme: Upstream.Scheme, host: String, port: Int, basePath: String, hostHeader: String)
        throws
    {
        let upstream = try #require(Upstream(parsing: text))
        #expect(upstream.scheme == scheme)
        #expect(upstream.host == host)
        #expect(upstream.port == port)
        #expect(upstream.basePath == basePath)
        #expect(upstream.hostHeader == hostHeader)
        #expect(upstream.url == "\(scheme.rawValue)://\(hostHeader)\(basePath)")
    }

    @Test func knowsLoopbackHosts() throws {
        #expect(try #require(Upstream(parsing: "http://127.0.0.1:1")).isLoopback)
        #expect(try #require(Upstream(parsing: "http://127.8.9.10")).isLoopback)
        #expect(try #require(Upstream(parsing: "http://[::1]")).isLoopback)
        #expect(try #require(Upstream(parsing: "http://[::ffff:127.0.0.1]")).isLoopback)
        #expect(try #require(Upstream(parsing: "http://LOCALHOST")).isLoopback)
        #expect(try #require(Upstream(parsing: "https://graph.microsoft.com")).isLoopback == false)
        #expect(try #require(Upstream(parsing: "http://localhost.evil.com")).isLoopback == false)
        #expect(try #require(Upstream(parsing: "http://128.0.0.1")).isLoopback == false)
    }

    @Test(arguments: [
        "graph.microsoft.com", "https:/graph.microsoft.com", "ftp://x.example", "https://", "https://:443",
        "https://user@x.example", "https://x.example?q", "https://x.example#f", "https://x.example:0",
        "https://x.example:65536", "https://x.example:8o", "https://[::1", "https://[zz::1]", "https://x .example",
        "https://x.example/../admin", "https://x.example/%2e", "https://x.example/%G0", "https://x.example/a\"b",
        "https://127.1", "https://-x.example",
    ])
    func rejects(text: String) {
        #expect(Upstream(parsing: text) == nil)
    }
}
