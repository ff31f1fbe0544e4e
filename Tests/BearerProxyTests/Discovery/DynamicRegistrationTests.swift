import Foundation
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

/// Dynamic client registration for a discovered route (RFC 7591; #25 item 3): the request is a public native
/// client with a loopback redirect, and the answer is a client id or a clear refusal.
@Suite struct DynamicRegistrationTests {
    @Test func theRequestIsAPublicNativeClientWithALoopbackRedirect() throws {
        let request = ClientRegistrationRequest(redirectPort: 8400, scopes: ["tools:call", "files:read"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(object["redirect_uris"] as? [String] == ["http://127.0.0.1:8400/"])
        #expect(object["token_endpoint_auth_method"] as? String == "none")
        #expect(object["application_type"] as? String == "native")
        #expect(object["grant_types"] as? [String] == ["authorization_code", "refresh_token"])
        #expect(object["response_types"] as? [String] == ["code"])
        #expect(object["scope"] as? String == "tools:call files:read")
        #expect(object["client_name"] as? String == "bearer-proxy")
    }

    @Test func noScopesMeansNoScopeMember() throws {
        let body = ClientRegistrationRequest(redirectPort: 1, scopes: []).body
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["scope"] == nil)
    }

    @Test(
        arguments: [
            (201, #"{"client_id": "abc"}"#, "abc"), (200, #"{"client_id": "abc", "client_secret": "s"}"#, "abc"),
            (201, #"{"client_id": ""}"#, nil), (201, "{}", nil), (201, "<html>", nil),
            (400, #"{"error": "invalid_redirect_uri", "error_description": "loopback only"}"#, nil), (403, "", nil),
        ] as [(Int, String, String?)])
    func answersAreDecoded(status: Int, body: String, clientID: String?) {
        do {
            let client = try RegisteredClient.decode(status: status, body: Array(body.utf8), endpoint: "https://a/r")
            #expect(client.clientID == clientID)
        } catch {
            #expect(clientID == nil)
            guard case .registrationRefused = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func aSecretIsNeverShown() throws {
        let client = try RegisteredClient.decode(
            status: 201, body: Array(#"{"client_id": "abc", "client_secret": "hunter2"}"#.utf8), endpoint: "e")
        #expect(client.clientSecret == "hunter2")
        #expect(!"\(client)".contains("hunter2") && "\(client)".contains("<redacted>"))
    }

    @Test func aRefusalSaysWhatToConfigure() {
        let error = DiscoveryError.registrationRefused(endpoint: "https://as/register", reason: "HTTP 403")
        #expect(error.explanation.contains("\"clientId\""))
    }

    /// Registration against the fake authorization server at the endpoint discovery found.
    static func register(
        answer: FakeDiscoveryPage
    ) async throws -> (Result<RegisteredClient, DiscoveryError>, [RecordedRequest]) {
        let pages: [String: FakeDiscoveryPage] = [
            "/mcp": FakeDiscoveryServer.challenge(#"Bearer resource_metadata="{origin}/m""#),
            "/m": FakeDiscoveryPage(body: #"{"resource": "{origin}/mcp", "authorization_servers": ["{origin}"]}"#),
            "/.well-known/oauth-authorization-server": FakeDiscoveryServer.server(issuer: "{origin}"),
            "/register": answer,
        ]
        return try await withUpstream(FakeDiscoveryServer.pages(pages)) { server in
            let found = try await DiscoveryFetchTests.discover(server)
            guard case .dynamic(let endpoint) = found.registration else {
                throw TestSupportError.shutDown
            }
            let client = DiscoveryClient(
                caFile: nil, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger)
            let policy = AddressPolicy(
                upstream: Upstream(parsing: server.baseURL)!, settings: DiscoverySettings(), resolver: TableResolver())
            let result: Result<RegisteredClient, DiscoveryError>
            do throws(DiscoveryError) {
                result = .success(
                    try await client.register(
                        ClientRegistrationRequest(redirectPort: 8400, scopes: found.scopes),
                        at: try await policy.pin(endpoint, role: "registration endpoint")))
            } catch {
                result = .failure(error)
            }
            return (result, server.requests.filter { $0.head.uri == "/register" })
        }
    }

    @Test("registers at the discovered endpoint with a JSON POST")
    func registers() async throws {
        let (result, requests) = try await Self.register(
            answer: FakeDiscoveryPage(status: 201, body: #"{"client_id": "dyn-123"}"#))
        #expect(try result.get().clientID == "dyn-123")
        let request = try #require(requests.first)
        #expect(request.head.method == "POST")
        #expect(request.head.header("content-type") == "application/json")
        #expect(request.head.header("authorization") == nil)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.bodyPrefix)) as? [String: Any])
        #expect(body["token_endpoint_auth_method"] as? String == "none")
        #expect(body["redirect_uris"] as? [String] == ["http://127.0.0.1:8400/"])
    }

    @Test("a refusal carries the server's error")
    func refused() async throws {
        let (result, _) = try await Self.register(
            answer: FakeDiscoveryPage(status: 400, body: #"{"error": "invalid_client_metadata"}"#))
        guard case .failure(.registrationRefused(_, let reason)) = result else {
            Issue.record("registration did not fail")
            return
        }
        #expect(reason.contains("invalid_client_metadata"))
    }
}
