import Foundation
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

/// `bearer-proxy discover ROUTE`, run as a user runs it, against a fake resource and authorization server (#25).
@Suite("Command line: discover")
struct DiscoverCommandTests {
    typealias Page = FakeDiscoveryPage

    static func configFile(_ upstream: FakeUpstream, route extra: String = "") throws -> String {
        let directory = try CommandLineTests.temporaryDirectory()
        let path = directory + "/routes.json"
        let json =
            #"{"account": {"flow": "dev"}, "routes": [{"prefix": "/mcp", "upstream": "\#(upstream.baseURL)/mcp", "#
            + #""auth": "discover"\#(extra)}, {"prefix": "/api", "upstream": "https://api.example.com", "#
            + #""scopes": ["api://a/R"]}]}"#
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let pages: [String: Page] = [
        "/mcp": FakeDiscoveryServer.challenge(#"Bearer resource_metadata="{origin}/m", scope="tools""#),
        "/m": Page(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}"]}"#),
        "/.well-known/oauth-authorization-server": FakeDiscoveryServer.server(issuer: "{origin}"),
    ]

    @Test("prints what it found, as JSON, and signs nobody in")
    func json() async throws {
        try await withUpstream(FakeDiscoveryServer.pages(Self.pages)) { upstream in
            let config = try Self.configFile(upstream)
            let result = try await CommandLineTests.run(["discover", "mcp", "--json", "--config", config])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(object["authorizationServer"] as? String == upstream.baseURL)
            #expect(object["resource"] as? String == upstream.baseURL + "/mcp")
            #expect(object["scopes"] as? [String] == ["tools"])
            #expect((object["client"] as? [String: Any])?["kind"] as? String == "dynamic")
            #expect(!upstream.requests.contains { ["/token", "/register", "/authorize"].contains($0.head.uri) })
        }
    }

    @Test("prints the metadata URLs tried as text")
    func text() async throws {
        try await withUpstream(FakeDiscoveryServer.pages(Self.pages)) { upstream in
            let config = try Self.configFile(upstream)
            let result = try await CommandLineTests.run(["discover", "/mcp", "--config", config])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("\(upstream.baseURL)/m — found"))
            #expect(result.stdout.contains("PKCE: S256"))
            #expect(result.stdout.contains("nothing was signed in"))
        }
    }

    @Test("a failure exits 1 with its one-line explanation")
    func failure() async throws {
        var pages = Self.pages
        pages["/.well-known/oauth-authorization-server"] = FakeDiscoveryServer.server(
            issuer: "{origin}", methods: #"["plain"]"#)
        try await withUpstream(FakeDiscoveryServer.pages(pages)) { upstream in
            let config = try Self.configFile(upstream)
            let result = try await CommandLineTests.run(["discover", "/mcp", "--config", config])
            #expect(result.status == 1)
            #expect(result.stderr.contains("does not advertise PKCE with S256"))
        }
    }

    @Test("a route that is not discovered is a usage error")
    func notDiscovered() async throws {
        try await withUpstream(FakeDiscoveryServer.pages(Self.pages)) { upstream in
            let config = try Self.configFile(upstream)
            let result = try await CommandLineTests.run(["discover", "/api", "--config", config])
            #expect(result.status == 2)
            #expect(result.stderr.contains("not a discovered route"))
        }
    }

    @Test("a route of the account's own authorization server: its metadata checked against the account's issuer")
    func accountAuthorizationServer() async throws {
        let authority = "https://login.microsoftonline.com/aaaabbbb-0000-cccc-1111-dddd2222eeee"
        let issuer = authority + "/v2.0"
        func pages(naming server: String) -> [String: Page] {
            [
                "/mcp": FakeDiscoveryServer.challenge(#"Bearer resource_metadata="{origin}/m""#),
                "/m": Page(
                    body: #"{"resource": "{origin}/mcp", "authorization_servers": ["\#(server)"], "#
                        + #""scopes_supported": ["api://mcp/Tools.Read"]}"#),
            ]
        }
        for (named, accepted) in [(issuer, true), ("https://other.example.com/v2.0", false)] {
            try await withUpstream(FakeDiscoveryServer.pages(pages(naming: named))) { upstream in
                let directory = try CommandLineTests.temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let config = directory + "/routes.json"
                try #"{"account": {"flow": "device-code", "authority": "\#(authority)", "#
                    .appending(#""clientId": "c"}, "routes": [{"prefix": "/mcp", "#)
                    .appending(#""upstream": "\#(upstream.baseURL)/mcp", "auth": "discover", "#)
                    .appending(#""discovery": {"authorizationServer": "account"}}]}"#)
                    .write(toFile: config, atomically: true, encoding: .utf8)
                let result = try await CommandLineTests.run(
                    ["discover", "mcp", "--json", "--config", config],
                    environment: ["XDG_STATE_HOME": directory + "/state"])
                let object =
                    (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
                if accepted {
                    #expect(result.status == 0, "\(result.stderr)")
                    #expect(object["authorizationServer"] as? String == issuer)
                    #expect(object["client"] as? String == "account")
                    #expect(object["scopes"] as? [String] == ["api://mcp/Tools.Read"])
                    #expect(object["resourceSent"] as? Bool == false)
                } else {
                    #expect(result.status == 1)
                    #expect(result.stderr.contains("not the account's"), "\(result.stderr)")
                }
                // No authorization-server metadata is asked for: nothing would sign in.
                #expect(!upstream.requests.contains { $0.head.uri.contains("/.well-known/oauth-authorization") })
            }
        }
    }
}
