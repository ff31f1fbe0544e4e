import Testing

@testable import BearerConfiguration
@testable import BearerTokens

/// `bearer-proxy logout ROUTE` at an authorization server that offers no revocation (#25 item 8: "revocation when
/// offered; keep or forget the registration"), through the real binary: signed out here, with a message that says
/// the server could not be asked to revoke, and the registration kept or forgotten as asked.
@Suite("Command line: logout ROUTE without a revocation endpoint")
struct DiscoveredLogoutTests {
    @Test("logout ROUTE: tokens deleted here, the message says the server offers no revocation, registration kept")
    func logoutWithoutRevocation() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.offersRevocation = false
        try await DiscoveredSignInTests.withServer(settings) { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let login = try await files.run(["login", "mcp"])
                #expect(login.status == 0, "\(login.stderr)")
                let key = try #require(try files.store.routeKey(upstream: server.resource))

                let logout = try await files.run(["logout", "mcp"])
                #expect(logout.status == 0, "\(logout.stderr)")
                #expect(
                    logout.stdout.contains(
                        "Signed out of /mcp (\(server.baseURL)): the authorization server offers no revocation "
                            + "(RFC 7009): the refresh token was deleted here and stays valid at the server until it "
                            + "expires."), "\(logout.stdout)")
                #expect(server.revoked.isEmpty)
                #expect(try files.store.signIn(key) == nil && files.store.routeKey(upstream: server.resource) == nil)
                #expect(try files.store.registration(issuer: server.baseURL) != nil)
                let token = try await files.run(["token", "mcp"])
                #expect(token.status == 1 && token.stderr.contains("bearer-proxy login /mcp"), "\(token.stderr)")

                // The kept registration signs in again without a second one; --forget-registration drops it.
                #expect(try await files.run(["login", "mcp"]).status == 0)
                #expect(server.registrations == 1)
                let forget = try await files.run(["logout", "mcp", "--forget-registration"])
                #expect(forget.status == 0, "\(forget.stderr)")
                #expect(forget.stdout.contains("offers no revocation (RFC 7009)"), "\(forget.stdout)")
                #expect(forget.stdout.contains("its client registration is forgotten too"), "\(forget.stdout)")
                #expect(try files.store.registration(issuer: server.baseURL) == nil)
                #expect(server.revoked.isEmpty)
            }
        }
    }
}
