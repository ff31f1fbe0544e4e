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

/// A discovered route whose upstream refuses its token runs discovery again (#25 items 1 and 3), at most once per
/// route per interval: another authorization server gets nothing of the old sign-in, a discovery that fails for now
/// leaves the stored metadata in use, and one that refuses the metadata leaves nothing in use.
@Suite("End to end: discovery again on a refused token")
struct DiscoveredRediscoveryTests {
    /// Signs in, starts a proxy on a clock that stands still (the rediscovery interval never passes by itself),
    /// and checks that a first request gets through before `body` runs.
    static func withSignedInProxy(
        _ server: FakeAuthorizationServer, _ scratch: StoreScratchDirectory, _ body: (ProxyHarness) async throws -> Void
    ) async throws {
        _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
        let frozen = Date()
        try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state, now: { frozen }) {
            proxy in
            #expect(try await TestClient.send(port: proxy.port, uri: "/a/x").status == .ok)
            try await body(proxy)
        }
    }

    @Test("an upstream that now names another authorization server: the old sign-in is set aside and sent nowhere")
    func authorizationServerChanged() async throws {
        try await DiscoveredSignInTests.withServer { first, scratch in
            let second = try await FakeAuthorizationServer.start()
            do {
                try await Self.withSignedInProxy(first, scratch) { proxy in
                    first.update { $0.authorizationServer = second.baseURL }
                    first.revokeAccessTokens()
                    let forms = first.tokenForms.count
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .unauthorized)
                    let detail = try response.problemDetail()
                    #expect(detail.contains(second.baseURL) && detail.contains("bearer-proxy login /a"))
                    // No refresh at the old server, nothing at all at the new one.
                    #expect(first.tokenForms.count == forms)
                    #expect(second.tokenForms.isEmpty && second.registrations == 0)
                }
                #expect(try DiscoveredSignInStore(directory: scratch.state).routeKey(upstream: first.resource) == nil)
            } catch {
                await second.shutdown()
                throw error
            }
            await second.shutdown()
        }
    }

    @Test("an upstream refusing every token gets one discovery per interval, not one per refused request")
    func boundedRediscovery() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await Self.withSignedInProxy(server, scratch) { proxy in
                server.update { $0.refusesTokens = true }
                let before = server.resourceMetadataRequests
                for _ in 0..<4 {
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .unauthorized)
                }
                #expect(server.resourceMetadataRequests == before + 1)
            }
        }
    }

    @Test(
        "a 401 naming resource_metadata without invalid_token runs discovery again: the same server, a refresh, one replay"
    )
    func bareChallengeRediscovers() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await Self.withSignedInProxy(server, scratch) { proxy in
                server.update { $0.bareChallenge = true }
                server.revokeAccessTokens()
                let before = server.resourceMetadataRequests
                let forms = server.tokenForms.count
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
                #expect(server.resourceMetadataRequests == before + 1)
                #expect(server.tokenForms.count == forms + 1)
                #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
            }
        }
    }

    @Test("an upstream answering every token with a bare resource_metadata challenge: one discovery per interval")
    func bareChallengeBounded() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await Self.withSignedInProxy(server, scratch) { proxy in
                server.update {
                    $0.bareChallenge = true
                    $0.refusesTokens = true
                }
                let before = server.resourceMetadataRequests
                for _ in 0..<4 {
                    let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                    #expect(response.status == .unauthorized)
                }
                #expect(server.resourceMetadataRequests == before + 1)
            }
        }
    }

    @Test("a discovery that fails for now (metadata 503) leaves the stored metadata in use: the refresh goes through")
    func transientFailureUsesStoredMetadata() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await Self.withSignedInProxy(server, scratch) { proxy in
                server.update { $0.metadataStatus = 503 }
                server.revokeAccessTokens()
                let before = server.resourceMetadataRequests
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
                #expect(server.resourceMetadataRequests == before + 1)
                #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
            }
        }
    }

    @Test("a discovery that refuses the metadata (another resource) leaves nothing stored in use: no refresh")
    func definitiveFailureUsesNothing() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            try await Self.withSignedInProxy(server, scratch) { proxy in
                server.update { $0.metadataResource = "http://127.0.0.1:1/elsewhere" }
                server.revokeAccessTokens()
                let forms = server.tokenForms.count
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .unauthorized)
                let detail = try response.problemDetail()
                #expect(detail.contains("RFC 9728") && detail.contains("bearer-proxy discover /a"))
                #expect(server.tokenForms.count == forms)
            }
        }
    }
}
