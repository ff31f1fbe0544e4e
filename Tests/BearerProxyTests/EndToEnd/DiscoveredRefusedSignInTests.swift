import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// A discovered route whose tokens the upstream or the authorization server refused is `needs-sign-in` in every
/// view of every process — the `serve` that met the refusal (its `401` and `/-/status`), a second `serve`, and
/// `status` and `token` in another process — because the refusal is written to the state directory, the one truth
/// they all read; and the words say refused, not expired. Real processes, real sockets.
@Suite("Processes: a refused discovered sign-in is needs-sign-in everywhere, and says refused")
struct DiscoveredRefusedSignInTests {
    /// What the authorization server or the upstream refuses.
    enum Refusal: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The upstream refuses the only access token, and the sign-in has no refresh token.
        case accessTokenWithoutRefreshToken
        /// The refresh token is refused: `invalid_grant`.
        case invalidGrant
        /// The client is no longer known: `invalid_client`.
        case invalidClient

        var testDescription: String { rawValue }

        var settings: FakeAuthorizationServer.Settings {
            var settings = FakeAuthorizationServer.Settings()
            if self == .accessTokenWithoutRefreshToken { settings.issuesRefreshTokens = false }
            return settings
        }

        func apply(to server: FakeAuthorizationServer) {
            server.revokeAccessTokens()
            switch self {
            case .accessTokenWithoutRefreshToken: break
            case .invalidGrant: server.revokeRefreshTokens()
            case .invalidClient: server.forgetClients()
            }
        }

        /// What the `401`, `token` and `status` say happened.
        var words: String {
            switch self {
            case .accessTokenWithoutRefreshToken: "its upstream refused its access token"
            case .invalidGrant: "its refresh token was refused"
            case .invalidClient: "no longer knows its client (invalid_client)"
            }
        }
    }

    /// The discovered part of the only route in a `status --json` document or `/-/status`.
    static func discovered(_ document: [String: Any]) throws -> [String: Any] {
        let routes = try #require(document["routes"] as? [[String: Any]])
        return try #require(routes.first?["discovered"] as? [String: Any])
    }

    /// Checks one view's state of the route: `needs-sign-in`, no expiry, the refusal's words.
    static func expectRefused(_ state: [String: Any], _ refusal: Refusal, view: String) {
        #expect(state["state"] as? String == "needs-sign-in", "\(view): \(state)")
        #expect(state["expiresOn"] == nil, "\(view): \(state)")
        #expect((state["detail"] as? String)?.contains(refusal.words) == true, "\(view): \(state)")
    }

    @Test(
        "refused tokens: 401 says refused; /-/status of both serves, status and token say needs-sign-in",
        arguments: Refusal.allCases)
    func refusedEverywhere(_ refusal: Refusal) async throws {
        try await DiscoveredSignInTests.withServer(refusal.settings) { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                try await DiscoveredProcessesTests.withServe(files) { first in
                    try await DiscoveredProcessesTests.withServe(files) { second in
                        for port in [first, second] {
                            #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)
                        }
                        refusal.apply(to: server)

                        let refused = try await TestClient.send(port: first, uri: "/mcp/x")
                        #expect(refused.status == .unauthorized)
                        #expect(refused.bodyText.contains(refusal.words), "\(refused.bodyText)")
                        #expect(!refused.bodyText.contains("expired"), "\(refused.bodyText)")
                        #expect(refused.bodyText.contains("bearer-proxy login /mcp"), "\(refused.bodyText)")

                        for port in [first, second] {
                            let admin = try await TestClient.send(port: port, uri: "/-/status").jsonObject()
                            Self.expectRefused(try Self.discovered(admin), refusal, view: "/-/status of \(port)")
                        }
                        let status = try await files.run(["status", "--json"])
                        #expect(status.status == 0, "\(status.stderr)")
                        let document = try #require(
                            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
                        Self.expectRefused(try Self.discovered(document), refusal, view: "status --json")
                        let text = try await files.run(["status"])
                        #expect(text.stdout.contains("discovered: needs-sign-in"), "\(text.stdout)")
                        #expect(!text.stdout.contains("expires in"), "\(text.stdout)")

                        let token = try await files.run(["token", "mcp"])
                        #expect(token.status == 1)
                        #expect(token.stderr.contains(refusal.words), "\(token.stderr)")
                        // The second serve, which still held the token in memory, says the same.
                        let other = try await TestClient.send(port: second, uri: "/mcp/y")
                        #expect(other.status == .unauthorized)
                        #expect(other.bodyText.contains(refusal.words), "\(other.bodyText)")
                    }
                }
            }
        }
    }
}
