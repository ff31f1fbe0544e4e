import Foundation
import Testing

/// `login ROUTE` through the real binary, `curl` as the browser, when the authorization server has forgotten the
/// registration stored on this machine: with pushed authorization requests (RFC 9126) it registers again before
/// the browser is opened; without them, the waiting line says what to do when the browser shows a client error.
@Suite("Command line: login ROUTE with a forgotten registration")
struct LoginRoutePushedRequestTests {
    @Test("with pushed requests, login ROUTE registers again before the browser: it never sees the forgotten client")
    func pushedRequestRegistersAgain() async throws {
        try await DiscoveredSignInTests.withServer(PushedAuthorizationRequestTests.pushing) { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let first = try await files.run(["login", "mcp"])
                #expect(first.status == 0, "\(first.stderr)")
                let forgotten = try #require(server.authorizeQueries.first?["client_id"])
                server.forgetClients()

                let again = try await files.run(["login", "mcp"])
                #expect(again.status == 0, "\(again.stderr)")
                #expect(again.stderr.contains("registering again"), "\(again.stderr)")
                #expect(!again.stderr.contains("--forget-registration"), "\(again.stderr)")
                #expect(server.registrations == 2 && server.pushed.unknownClients == [forgotten])
                let clients = server.authorizeQueries.map { $0["client_id"] ?? "" }
                #expect(clients.count == 2 && clients[1] != forgotten, "\(clients)")
            }
        }
    }

    @Test("without pushed requests, login ROUTE with a stored registration says what to do on a client error")
    func forgetRegistrationHint() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let first = try await files.run(["login", "mcp"])
                #expect(first.status == 0, "\(first.stderr)")
                #expect(!first.stderr.contains("--forget-registration"), "\(first.stderr)")

                let again = try await files.run(["login", "mcp"])
                #expect(again.status == 0, "\(again.stderr)")
                #expect(
                    again.stderr.contains(
                        "run: bearer-proxy logout /mcp --forget-registration, then: bearer-proxy login /mcp"),
                    "\(again.stderr)")
            }
        }
    }
}
