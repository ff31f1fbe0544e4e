import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn
@testable import BearerTokens

/// `bearer-proxy login ROUTE --no-browser` as a person at a terminal runs it (#25 item 8: "a no-browser mode that
/// prints the URL and accepts the pasted redirect"): the real binary on a pseudo terminal prints the authorization
/// URL, the person opens it in a browser elsewhere (the test browser, which stops at the redirect to this machine's
/// loopback listener, as a browser on another machine would) and pastes the address it was sent to.
@Suite("Command line: login ROUTE --no-browser")
struct NoBrowserLoginTests {
    /// The address the authorization server redirects to for the authorization URL `screen` shows: what the person
    /// pastes. The redirect itself is not followed.
    static func redirect(shownOn screen: String) async throws -> String {
        let url = try #require(
            screen.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("http") && $0.contains("/authorize?") })
        let visit = try await TestBrowser.open(url, maximumRedirects: 0)
        return try #require(visit.final.headers.first(name: "location"))
    }

    /// Runs `login mcp --no-browser` at a terminal, pasting what `paste` makes of the redirect; its exit status.
    static func login(
        _ files: DiscoveredRouteFiles, terminal: PseudoTerminal, paste: @escaping (String) -> String
    ) async throws -> Int32 {
        try await terminal.run(
            CommandLineTests.binary, ["login", "mcp", "--no-browser", "--config", files.config],
            environment: files.environment(browser: DiscoveredRouteFiles.approvingBrowser)
        ) { _ in
            try await terminal.waitFor("Then paste the address the browser was sent to")
            terminal.type(paste(try await Self.redirect(shownOn: terminal.text)) + "\n")
        }
    }

    @Test("the printed URL, the pasted redirect: signed in and stored, with no browser started")
    func pastedRedirectSignsIn() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let terminal = try PseudoTerminal()
                let status = try await Self.login(files, terminal: terminal) { $0 }
                #expect(status == 0, "\(terminal.text)")
                #expect(terminal.text.contains("Signed in for /mcp at \(server.baseURL)"), "\(terminal.text)")
                // BROWSER would approve at once: had it been started, the server would have seen a second visit.
                #expect(terminal.text.contains("open this address in any browser"), "\(terminal.text)")
                #expect(!terminal.text.contains("Opened in your browser"), "\(terminal.text)")
                #expect(server.authorizeQueries.count == 1)
                #expect(server.tokenForms.map { $0["grant_type"] } == ["authorization_code"])
                let key = try #require(try files.store.routeKey(upstream: server.resource))
                let stored = try #require(try files.store.signIn(key))
                #expect(stored.refreshToken != nil && stored.accessToken != nil)
                let token = try await files.run(["token", "mcp"])
                #expect(token.status == 0 && token.stdout.hasPrefix("at-"), "\(token.stderr)")
            }
        }
    }

    @Test("a pasted redirect with another state is refused: no code exchanged, nothing stored")
    func pastedRedirectWithAnotherStateIsRefused() async throws {
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                let terminal = try PseudoTerminal()
                let status = try await Self.login(files, terminal: terminal) {
                    $0.replacingOccurrences(of: "state=", with: "state=forged")
                }
                #expect(status == 1, "\(terminal.text)")
                #expect(terminal.text.contains("a state that this sign-in did not send"), "\(terminal.text)")
                #expect(server.tokenForms.isEmpty)
                #expect(try files.store.routeKey(upstream: server.resource) == nil)
            }
        }
    }
}
