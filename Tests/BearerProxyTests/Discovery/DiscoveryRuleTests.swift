import Logging
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

/// Discovery's rules without sockets (#25 item 1): a remote upstream `https://mcp.example.com/mcp` whose 401,
/// metadata and authorization server are documents in memory, and a resolver from a table.
@Suite struct DiscoveryRuleTests {
    static let upstream = "https://mcp.example.com/mcp"
    static let metadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    static let challenge = #"Bearer resource_metadata="\#(metadataURL)""#
    static let resolver = TableResolver(table: [
        "mcp.example.com": [.v4([93, 184, 216, 34])], "as.example.com": [.v4([93, 184, 216, 35])],
        "internal.example.com": [.v4([93, 184, 216, 36]), .v4([10, 0, 0, 7])],
        "metadata.example.com": [.v6([0, 0, 0, 0, 0, 0xFFFF, 0xA9FE, 0xA9FE])],
    ])

    static func resourceMetadata(issuer: String = "https://as.example.com", resource: String = upstream) -> String {
        #"{"resource": "\#(resource)", "authorization_servers": ["\#(issuer)"], "scopes_supported": ["mcp:read"]}"#
    }

    static func serverMetadata(
        issuer: String = "https://as.example.com", endpoints: String = "https://as.example.com",
        methods: String = #"["S256"]"#
    ) -> String {
        #"{"issuer": "\#(issuer)", "authorization_endpoint": "\#(endpoints)/authorize", "#
            + #""token_endpoint": "\#(endpoints)/token", "code_challenge_methods_supported": \#(methods)}"#
    }

    static let serverURL = "https://as.example.com/.well-known/oauth-authorization-server"

    static func discover(
        _ transport: MemoryTransport, settings: DiscoverySettings = DiscoverySettings(), upstream: String = upstream
    ) async throws(DiscoveryError) -> DiscoveredAuthorization {
        let discovery = ResourceDiscovery(
            route: Upstream(parsing: upstream)!, settings: settings, transport: transport, resolver: resolver,
            logger: ProxyHarness.silentLogger)
        return try await discovery.run()
    }

    static func failure(
        _ transport: MemoryTransport, settings: DiscoverySettings = DiscoverySettings()
    ) async -> DiscoveryError? {
        do {
            _ = try await discover(transport, settings: settings)
            return nil
        } catch {
            return error
        }
    }

    static var valid: MemoryTransport {
        MemoryTransport(
            challenge: challenge,
            documents: [metadataURL: resourceMetadata(), serverURL: serverMetadata()])
    }

    @Test func aValidChainIsFound() async throws {
        let found = try await Self.discover(Self.valid)
        #expect(found.resource == Self.upstream)
        #expect(found.issuer == "https://as.example.com")
        #expect(found.tokenEndpoint == "https://as.example.com/token")
        #expect(found.scopes == ["mcp:read"] && found.scopeSource == .metadata)
        #expect(found.registration == .unavailable)
        #expect(found.metadataFromChallenge)
    }

    @Test func theChallengeScopeComesFirst() async throws {
        var transport = Self.valid
        transport.challenge = #"Bearer scope="files:read files:write", resource_metadata="\#(Self.metadataURL)""#
        let found = try await Self.discover(transport)
        #expect(found.scopes == ["files:read", "files:write"] && found.scopeSource == .challenge)
    }

    @Test func theChallengeNamingMetadataIsTheOneUsed() async throws {
        var transport = Self.valid
        transport.challenge =
            #"Bearer realm="a", scope="ignored", Bearer scope="used", resource_metadata="\#(Self.metadataURL)""#
        let found = try await Self.discover(transport)
        #expect(found.scopes == ["used"] && found.metadataFromChallenge)
    }

    @Test func withoutAChallengeTheWellKnownURLsAreTried() async throws {
        var transport = Self.valid
        transport.probeStatus = 200
        transport.challenge = nil
        let found = try await Self.discover(transport)
        #expect(!found.metadataFromChallenge && found.probeStatus == 200)
        #expect(found.resourceMetadataAttempts.map(\.url) == [Self.metadataURL])
    }

    @Test func theSystemResolverSeesEveryAddressOfAName() async throws {
        // /etc/hosts answers for localhost: no network needed.
        let addresses = try await SystemHostResolver().addresses(of: "localhost")
        #expect(!addresses.isEmpty && addresses.allSatisfy { $0.reach == .loopback })
    }

    @Test func withoutScopesNoneAreAskedFor() async throws {
        var transport = Self.valid
        transport.documents[Self.metadataURL] =
            #"{"resource": "\#(Self.upstream)", "authorization_servers": ["#
            + #""https://as.example.com"], "scopes_supported": []}"#
        let found = try await Self.discover(transport)
        #expect(found.scopes.isEmpty && found.scopeSource == .none)
    }

    @Test func aRemoteUpstreamMayNotNameALoopbackMetadataURL() async {
        var transport = Self.valid
        transport.challenge = #"Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource""#
        guard case .privateAddress(_, _, "127.0.0.1", "loopback")? = await Self.failure(transport) else {
            Issue.record("a loopback metadata URL was used")
            return
        }
    }

    @Test(arguments: [
        "https://169.254.169.254/latest", "https://[::ffff:169.254.169.254]/", "https://[64:ff9b::a9fe:a9fe]/",
        "https://10.0.0.1/", "https://[fd00::1]/", "https://localhost/", "https://printer.localhost/",
        "https://internal.example.com/", "https://metadata.example.com/",
    ])
    func aHostileIssuerOnAPrivateAddressIsRefused(issuer: String) async {
        var transport = Self.valid
        transport.documents[Self.metadataURL] = Self.resourceMetadata(issuer: issuer)
        guard case .privateAddress? = await Self.failure(transport) else {
            Issue.record("\(issuer) was not refused")
            return
        }
    }

    @Test func allowPrivateAddressesLiftsTheRule() async throws {
        var transport = Self.valid
        transport.documents[Self.metadataURL] = Self.resourceMetadata(issuer: "https://10.0.0.1")
        transport.documents["https://10.0.0.1/.well-known/oauth-authorization-server"] = Self.serverMetadata(
            issuer: "https://10.0.0.1", endpoints: "https://10.0.0.1")
        let found = try await Self.discover(transport, settings: DiscoverySettings(allowPrivateAddresses: true))
        #expect(found.issuer == "https://10.0.0.1")
    }

    @Test func anEndpointOnAPrivateAddressIsRefused() async {
        var transport = Self.valid
        transport.documents[Self.serverURL] = Self.serverMetadata(endpoints: "https://internal.example.com")
        guard case .privateAddress(_, _, "10.0.0.7", "private")? = await Self.failure(transport) else {
            Issue.record("a name resolving to a private address was used")
            return
        }
    }

    @Test func aPlainHTTPEndpointIsRefused() async {
        var transport = Self.valid
        transport.documents[Self.serverURL] = Self.serverMetadata(endpoints: "http://as.example.com")
        #expect(
            await Self.failure(transport)
                == .insecureURL(role: "authorization endpoint", url: "http://as.example.com/authorize"))
    }

    @Test func aPlainHTTPIssuerIsRefused() async {
        var transport = Self.valid
        transport.documents[Self.metadataURL] = Self.resourceMetadata(issuer: "http://as.example.com")
        #expect(
            await Self.failure(transport)
                == .insecureURL(role: "authorization server", url: "http://as.example.com"))
    }

    @Test func theIssuerMustBeByteEqual() async {
        var transport = Self.valid
        transport.documents[Self.serverURL] = Self.serverMetadata(issuer: "https://AS.example.com")
        #expect(
            await Self.failure(transport)
                == .issuerMismatch(
                    expected: "https://as.example.com", found: "https://AS.example.com", url: Self.serverURL))
    }

    @Test(arguments: [#"["plain"]"#, "[]", #"["s256"]"#])
    func withoutS256NothingIsUsed(methods: String) async {
        var transport = Self.valid
        transport.documents[Self.serverURL] = Self.serverMetadata(methods: methods)
        #expect(await Self.failure(transport) == .pkceUnsupported(issuer: "https://as.example.com"))
    }

    @Test func anotherResourceIsNotUsed() async {
        var transport = Self.valid
        transport.documents[Self.metadataURL] = Self.resourceMetadata(resource: "https://evil.example.com/mcp")
        #expect(
            await Self.failure(transport)
                == .resourceMismatch(resource: "https://evil.example.com/mcp", upstream: Self.upstream))
    }

    /// RFC 9728 §2 and RFC 9449 §5.1: what the metadata says of DPoP is found, for the sign-in to decide on a key
    /// (`DPoPBinding`); neither refuses discovery.
    @Test(arguments: [true, false])
    func dpopMetadataIsFound(required: Bool) async throws {
        var transport = Self.valid
        transport.documents[Self.metadataURL] =
            #"{"resource": "\#(Self.upstream)", "authorization_servers": ["https://as.example.com"], "#
            + #""dpop_bound_access_tokens_required": \#(required)}"#
        let found = try await Self.discover(transport, settings: DiscoverySettings())
        #expect(found.dpopBoundAccessTokensRequired == required)
        #expect(found.dpopSigningAlgorithms.isEmpty)
    }

    @Test func metadataMustNameAnAuthorizationServer() async {
        var transport = Self.valid
        transport.documents[Self.metadataURL] = #"{"resource": "\#(Self.upstream)", "authorization_servers": []}"#
        #expect(await Self.failure(transport) == .noAuthorizationServer(url: Self.metadataURL))
    }

    @Test func noMetadataListsEveryURLTried() async {
        let transport = MemoryTransport(challenge: #"Bearer realm="mcp""#)
        #expect(
            await Self.failure(transport)
                == .noMetadata(tried: [
                    MetadataAttempt(url: Self.metadataURL, outcome: "HTTP 404"),
                    MetadataAttempt(
                        url: "https://mcp.example.com/.well-known/oauth-protected-resource", outcome: "HTTP 404"),
                ]))
    }

    @Test func eachErrorExplainsItselfInOneLine() {
        let errors: [DiscoveryError] = [
            .noMetadata(tried: [MetadataAttempt(url: "https://a/\u{1B}[31m", outcome: "HTTP 404")]),
            .resourceMismatch(resource: "r", upstream: "u"), .issuerMismatch(expected: "a", found: "b", url: "c"),
            .pkceUnsupported(issuer: "i"), .insecureURL(role: "token endpoint", url: "http://x"),
            .privateAddress(role: "r", url: "u", address: "10.0.0.1", reach: "private"), .hostNotFound(host: "h"),
            .dpopRequired(resource: "https://a/\u{1B}[31m"),
        ]
        for error in errors {
            #expect(!error.explanation.contains("\n") && !error.explanation.contains("\u{1B}"))
        }
    }
}
