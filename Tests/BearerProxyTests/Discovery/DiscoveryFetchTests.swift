import AsyncHTTPClient
import NIOPosix
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

/// Discovery over real sockets (#25): a fake protected resource and authorization server on 127.0.0.1:0, fetched
/// with AsyncHTTPClient exactly as `bearer-proxy discover` fetches them.
@Suite struct DiscoveryFetchTests {
    typealias Page = FakeDiscoveryPage
    typealias Fake = FakeDiscoveryServer

    /// Discovery for the route `{origin}/mcp` of `server`.
    static func discover(
        _ server: FakeUpstream, settings: DiscoverySettings = DiscoverySettings()
    ) async throws(DiscoveryError) -> DiscoveredAuthorization {
        let route = Route(
            prefix: "/mcp", upstream: Upstream(parsing: server.baseURL + "/mcp")!, auth: .discover(settings))
        return try await DiscoveredAuthorization.discover(
            for: route, settings: settings, logger: ProxyHarness.silentLogger)
    }

    static func failure(_ server: FakeUpstream) async -> DiscoveryError? {
        do {
            _ = try await discover(server)
            return nil
        } catch {
            return error
        }
    }

    @Test("resource_metadata, then RFC 8414 path-inserted metadata for an issuer with a path")
    func challengeAndRFC8414() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(
                #"Bearer error="invalid_request", scope="tools:call", "#
                    + #"resource_metadata="{origin}/meta/mcp""#),
            "/meta/mcp": Page(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}/tenant1"]}"#),
            "/.well-known/oauth-authorization-server/tenant1": Fake.server(issuer: "{origin}/tenant1"),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            let found = try await Self.discover(server)
            let origin = server.baseURL
            #expect(found.probeStatus == 401 && found.metadataFromChallenge)
            #expect(found.resourceMetadataAttempts == [MetadataAttempt(url: origin + "/meta/mcp", outcome: "found")])
            #expect(found.resource == origin + "/mcp")
            #expect(found.issuer == origin + "/tenant1")
            #expect(found.serverMetadataAttempts.map(\.outcome) == ["found"])
            #expect(found.authorizationEndpoint == origin + "/authorize")
            #expect(found.scopes == ["tools:call"] && found.scopeSource == .challenge)
            #expect(found.registration == .dynamic(endpoint: origin + "/register"))
            // The probe carried no credential.
            #expect(server.requests.allSatisfy { $0.head.header("authorization") == nil })
        }
    }

    @Test("no resource_metadata: path-form then root-form metadata; OIDC path-appended for the server")
    func wellKnownFallbacks() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer realm="mcp""#),
            "/.well-known/oauth-protected-resource": Page(
                body: #"{"resource": "{origin}", "authorization_servers": ["{origin}/t"], "scopes_supported": ["a"]}"#),
            "/t/.well-known/openid-configuration": Fake.server(issuer: "{origin}/t", registration: false),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            let found = try await Self.discover(server, settings: DiscoverySettings(clientID: "my-app"))
            let origin = server.baseURL
            #expect(
                found.resourceMetadataAttempts == [
                    MetadataAttempt(url: origin + "/.well-known/oauth-protected-resource/mcp", outcome: "HTTP 404"),
                    MetadataAttempt(url: origin + "/.well-known/oauth-protected-resource", outcome: "found"),
                ])
            #expect(
                found.serverMetadataAttempts.map(\.url) == [
                    origin + "/.well-known/oauth-authorization-server/t",
                    origin + "/.well-known/openid-configuration/t", origin + "/t/.well-known/openid-configuration",
                ])
            #expect(found.scopes == ["a"] && found.scopeSource == .metadata)
            #expect(found.registration == .configured(clientID: "my-app"))
        }
    }

    @Test("OIDC path-inserted metadata is the second form tried")
    func openIDPathInserted() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#),
            "/.well-known/oauth-protected-resource/mcp": Page(
                body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}/t"]}"#),
            "/.well-known/openid-configuration/t": Fake.server(issuer: "{origin}/t", registration: false),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            let found = try await Self.discover(server)
            #expect(found.serverMetadataAttempts.map(\.outcome) == ["HTTP 404", "found"])
            #expect(found.scopeSource == .none && found.registration == .unavailable)
        }
    }

    @Test("an issuer that differs by a trailing slash is a mismatch")
    func wrongIssuer() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": Page(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}/t"]}"#),
            "/.well-known/oauth-authorization-server/t": Fake.server(issuer: "{origin}/t/"),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            let origin = server.baseURL
            #expect(
                await Self.failure(server)
                    == .issuerMismatch(
                        expected: origin + "/t", found: origin + "/t/",
                        url: origin + "/.well-known/oauth-authorization-server/t"))
        }
    }

    @Test("a server without S256 is refused")
    func missingS256() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": Page(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}"]}"#),
            "/.well-known/oauth-authorization-server": Fake.server(issuer: "{origin}", methods: #"["plain"]"#),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            #expect(await Self.failure(server) == .pkceUnsupported(issuer: server.baseURL))
        }
    }

    @Test("metadata for a sibling path is not this upstream's")
    func resourceMismatch() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": Page(body: #"{"resource": "{origin}/mcp2", "authorization_servers": ["{origin}"]}"#),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            #expect(
                await Self.failure(server)
                    == .resourceMismatch(resource: server.baseURL + "/mcp2", upstream: server.baseURL + "/mcp"))
        }
    }

    @Test("a hostile 401 naming another origin's metadata gets nothing of it")
    func hostileChallengeNamingAnotherOrigin() async throws {
        // The other origin's metadata is genuine — for itself.
        let otherPages: [String: Page] = [
            "/.well-known/oauth-protected-resource": Page(
                body: #"{"resource": "{origin}", "authorization_servers": ["{origin}"]}"#),
            "/.well-known/oauth-authorization-server": Fake.server(issuer: "{origin}"),
        ]
        try await withUpstream(Fake.pages(otherPages)) { other in
            let pages: [String: Page] = [
                "/mcp": Fake.challenge(#"Bearer resource_metadata="{other}/.well-known/oauth-protected-resource""#)
            ]
            try await withUpstream(Fake.pages(pages, other: other.baseURL)) { server in
                #expect(
                    await Self.failure(server)
                        == .resourceMismatch(resource: other.baseURL, upstream: server.baseURL + "/mcp"))
                // Its authorization server was never asked.
                #expect(other.requests.map(\.head.uri) == ["/.well-known/oauth-protected-resource"])
            }
        }
    }

    @Test("metadata that is not JSON is reported with its URL")
    func invalidMetadata() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": Page(body: "<html>"),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            guard case .invalidMetadata(let url, _)? = await Self.failure(server) else {
                Issue.record("HTML was taken for metadata")
                return
            }
            #expect(url == server.baseURL + "/m")
        }
    }

    @Test("a metadata URL that redirects is not followed")
    func redirectsAreNotFollowed() async throws {
        let pages: [String: Page] = [
            "/mcp": Fake.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": Page(status: 302, headers: [("location", "{origin}/elsewhere")], body: ""),
            "/elsewhere": Page(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}"]}"#),
        ]
        try await withUpstream(Fake.pages(pages)) { server in
            #expect(
                await Self.failure(server)
                    == .noMetadata(tried: [MetadataAttempt(url: server.baseURL + "/m", outcome: "HTTP 302")]))
            #expect(!server.requests.contains { $0.head.uri == "/elsewhere" })
        }
    }

    @Test("a probe answered with an endless event stream ends with its head (the client is shut down, not drained)")
    func probeOfAnEventStream() async throws {
        let (events, feed) = AsyncStream<String>.makeStream()
        defer { feed.finish() }
        try await withUpstream({ _ in .events(events) }) { server in
            let client = DiscoveryClient(
                caFile: nil, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger)
            feed.yield("data: hello\n\n")
            // A probe that read the body would end only at the deadline, with an error; this one has the head (no
            // bound on the time: a suite on a loaded machine stalls for seconds — 40 such probes at once take ~30 ms).
            let probe = try await client.probe(
                try await PinnedURL(upstream: Upstream(parsing: server.baseURL + "/mcp")!, resolver: TableResolver()))
            #expect(probe.status == 200)
            try await server.waitForClosedConnections(1)
        }
    }

    @Test("within a discovery, whose clients outlive the probe, a probe of an endless event stream ends with its head")
    func probeOfAnEventStreamWithinAnOperation() async throws {
        let (events, feed) = AsyncStream<String>.makeStream()
        defer { feed.finish() }
        try await withUpstream({ _ in .events(events) }) { server in
            feed.yield("data: hello\n\n")
            try await DiscoveryClient.with(
                caFile: nil, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger
            ) { client in
                let probe = try await client.probe(
                    try await PinnedURL(
                        upstream: Upstream(parsing: server.baseURL + "/mcp")!, resolver: TableResolver()))
                #expect(probe.status == 200)
                // Closed by the response let go, while the operation's client is still open.
                try await server.waitForClosedConnections(1)
                #expect(client.connections?.clientCount == 1)
            }
        }
    }

    @Test("an upstream that refuses connections is reported, not waited for")
    func upstreamDown() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let settings = DiscoverySettings()
        let route = Route(
            prefix: "/mcp", upstream: Upstream(parsing: "http://127.0.0.1:\(refusing.port)/mcp")!,
            auth: .discover(settings))
        do {
            _ = try await DiscoveredAuthorization.discover(
                for: route, settings: settings, logger: ProxyHarness.silentLogger)
            Issue.record("discovery succeeded against a closed port")
        } catch {
            guard case .upstreamUnreachable = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }
}
