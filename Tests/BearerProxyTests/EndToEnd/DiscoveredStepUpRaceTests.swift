import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// A step-up `login ROUTE --scopes` and a refresh of the narrower grant that a running `serve` has in flight, on real
/// processes: whichever lands first, the file, `status` and the next tokens keep the login's wider sign-in and its
/// refresh token. A refresh writes its sign-in only while the file still holds the refresh token it redeemed.
@Suite("Processes: a step-up login and a refresh in flight — the login's sign-in stands, in both orders")
struct DiscoveredStepUpRaceTests {
    enum Order: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The login lands while the refresh is held at the token endpoint; the refresh's answer comes after.
        case loginWhileRefreshHeld
        /// The refresh is answered and written first; the login lands after.
        case refreshBeforeLogin

        var testDescription: String { rawValue }
    }

    static let wider = ["mcp:read", "mcp:write"]

    @Test("the login's wider sign-in stays in the file, in status and in what serve sends", arguments: Order.allCases)
    func loginStands(_ order: Order) async throws {
        var fake = FakeAuthorizationServer.Settings()
        fake.challengeScope = "mcp:read"
        try await DiscoveredSignInTests.withServer(fake) { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                // A second serve holds the narrow sign-in too; the login must stand in it as well.
                try await DiscoveredProcessesTests.withServe(files) { other in
                    try await DiscoveredProcessesTests.withServe(files) { port in
                        #expect(try await TestClient.send(port: other, uri: "/mcp/x").status == .ok)
                        #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)
                        // The upstream refuses serve's token: serve refreshes the narrow grant, held at the token endpoint.
                        server.update { $0.holdsRefreshes = true }
                        server.revokeAccessTokens()
                        async let refreshing = TestClient.send(port: port, uri: "/mcp/refresh")
                        try await withTimeout(waitingFor: "serve's refresh to reach the token endpoint") {
                            while server.heldRefreshes == 0 { try await Task.sleep(for: .milliseconds(5)) }
                        }
                        let login: [String] = ["login", "mcp", "--scopes", Self.wider.joined(separator: " ")]
                        switch order {
                        case .loginWhileRefreshHeld:
                            let stepUp = try await files.run(login)
                            #expect(stepUp.status == 0, "\(stepUp.stderr)")
                            server.releaseHeldRefreshes()
                            #expect(try await refreshing.status == .ok)
                        case .refreshBeforeLogin:
                            server.releaseHeldRefreshes()
                            #expect(try await refreshing.status == .ok)
                            let stepUp = try await files.run(login)
                            #expect(stepUp.status == 0, "\(stepUp.stderr)")
                        }
                        // The refresh's answer has been handled (its request was answered): the file keeps the login's.
                        let key = try #require(try files.store.routeKey(upstream: server.resource))
                        let stored = try #require(try files.store.signIn(key))
                        #expect(stored.grantedScopes.map(Set.init) == Set(Self.wider), "\(stored)")
                        let status = try await files.run(["status", "--json"])
                        let document = try #require(
                            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
                        let state = try DiscoveredRefusedSignInTests.discovered(document)
                        #expect(state["state"] as? String == "signed-in", "\(state)")
                        #expect((state["scopes"] as? [String]).map(Set.init) == Set(Self.wider), "\(state)")
                        // serve sends the login's token, and the login's refresh token still works.
                        let loginToken = try #require(stored.accessToken)
                        _ = try await DiscoveredSignInFollowTests.poll(port, until: "serve to send the login's token") {
                            _ in server.bearers.last == loginToken
                        }
                        server.revokeAccessTokens()
                        let again = try await TestClient.send(port: port, uri: "/mcp/again")
                        #expect(again.status == .ok, "\(again.bodyText)")
                        let refreshed = try #require(try files.store.signIn(key))
                        #expect(refreshed.grantedScopes.map(Set.init) == Set(Self.wider), "\(refreshed)")
                        // The other serve, whose narrow token the upstream refuses too, ends up with the login's
                        // sign-in: its own refresh of the narrow grant never writes over the login's.
                        server.update { $0.holdsRefreshes = false }
                        let current = try #require(try files.store.signIn(key)?.accessToken)
                        _ = try await DiscoveredSignInFollowTests.poll(
                            other, until: "the other serve to send the login's"
                        ) {
                            response in response.status == .ok && server.bearers.last == current
                        }
                        let final = try #require(try files.store.signIn(key))
                        #expect(final.grantedScopes.map(Set.init) == Set(Self.wider), "\(final)")
                    }
                }
            }
        }
    }
}
