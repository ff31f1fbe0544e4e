import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn
@testable import BearerTokens

/// `login ROUTE` at an authorization server that offers pushed authorization requests (RFC 9126), over real sockets:
/// the request is pushed first and the browser carries only `client_id` and `request_uri`; a push refused with
/// `invalid_client` for the stored registration registers again before any browser is sent; any other refusal is
/// said with the server's words. Without pushes, the waiting line says what to do when the browser shows an error
/// about the client instead (RFC 6749 §4.1.2.1: the server does not redirect then).
@Suite struct PushedAuthorizationRequestTests {
    static let hint = "bearer-proxy logout /mcp --forget-registration"

    static var pushing: FakeAuthorizationServer.Settings {
        var settings = FakeAuthorizationServer.Settings()
        settings.offersPushedRequests = true
        return settings
    }

    /// The query of `url`, by name.
    static func query(_ url: String) throws -> [String: String] {
        let items = try #require(URLComponents(string: url)?.queryItems)
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    @Test(
        "discovery finds the pushed authorization request endpoint, and refuses a server that requires pushes but names none"
    )
    func discovery() async throws {
        try await DiscoveredSignInTests.withServer(Self.pushing) { server, _ in
            let found = try await DiscoveredAuthorization.discover(
                for: DiscoveredSignInTests.route(server), settings: DiscoverySettings(),
                logger: ProxyHarness.silentLogger)
            #expect(found.pushedAuthorizationRequestEndpoint == server.baseURL + "/par")
        }
        var requiring = FakeAuthorizationServer.Settings()
        requiring.requiresPushedRequests = true
        try await DiscoveredSignInTests.withServer(requiring) { server, _ in
            do throws(DiscoveryError) {
                _ = try await DiscoveredAuthorization.discover(
                    for: DiscoveredSignInTests.route(server), settings: DiscoverySettings(),
                    logger: ProxyHarness.silentLogger)
                Issue.record("discovery accepted a server that requires pushes and names no endpoint for them")
            } catch {
                #expect(error.explanation.contains("require_pushed_authorization_requests"), "\(error.explanation)")
                #expect(!error.isTransient)
            }
        }
    }

    @Test("the request is pushed first; the browser gets only client_id and request_uri")
    func pushedFirst() async throws {
        try await DiscoveredSignInTests.withServer(Self.pushing) { server, scratch in
            let console = ScriptedConsole(browser: true)
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: console).get()
            #expect(outcome.issuer == server.baseURL)

            let opened = try #require(console.opened.first)
            #expect(console.opened.count == 1)
            #expect(opened.hasPrefix(server.baseURL + "/authorize?"))
            let browserQuery = try Self.query(opened)
            #expect(Set(browserQuery.keys) == ["client_id", "request_uri"])
            #expect(browserQuery["client_id"] == outcome.clientID)
            #expect(server.authorizeQueries.map { Set($0.keys) } == [["client_id", "request_uri"]])

            let pushed = server.pushed
            let form = try #require(pushed.forms.first)
            #expect(pushed.forms.count == 1 && pushed.authentications == ["none"])
            #expect(form["response_type"] == "code" && form["client_id"] == outcome.clientID)
            #expect(form["code_challenge_method"] == "S256" && form["resource"] == server.resource)
            #expect(form["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)
            #expect(form["state"]?.isEmpty == false)
            // The challenge pushed is the one the code was redeemed against (the sign-in's own verifier).
            let verifier = try #require(server.tokenForms.first?["code_verifier"])
            #expect(form["code_challenge"] == FakeIdentityGrants.codeChallenge(for: verifier))

            // The endpoint is kept with the sign-in, for a sign-in whose discovery fails for now.
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            #expect(try store.signIn(key)?.pushedAuthorizationRequestEndpoint == server.baseURL + "/par")
            #expect(!console.lines.contains { $0.contains("--forget-registration") })
        }
    }

    @Test(
        "a configured confidential client authenticates its push as at the token endpoint",
        arguments: [
            ([String]?.none, "client_secret_basic"), (["client_secret_post"], "client_secret_post"),
        ])
    func pushAuthenticatesClient(methods: [String]?, expected: String) async throws {
        var settings = Self.pushing
        settings.secrets = ["conf": DiscoveredClientSecretTests.secret]
        settings.authMethods = methods
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            let console = ScriptedConsole(browser: true)
            _ = try await DiscoveredSignInTests.signIn(
                server, state: scratch.state, settings: DiscoveredClientSecretTests.settings, console: console,
                environment: DiscoveredClientSecretTests.environment
            ).get()
            #expect(server.pushed.authentications == [expected])
            #expect(server.tokenAuthentications == [expected])
            #expect(!console.transcript.contains(DiscoveredClientSecretTests.secret))
            #expect(!(console.opened.first ?? "").contains(DiscoveredClientSecretTests.secret))
        }
    }

    @Test(
        "a push refused with invalid_client for the stored registration registers again at once: the browser never sees the old client"
    )
    func forgottenRegistration() async throws {
        try await DiscoveredSignInTests.withServer(Self.pushing) { server, scratch in
            let first = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            server.forgetClients()
            let console = ScriptedConsole(browser: true)
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: console).get()

            #expect(outcome.clientID != first.clientID && server.registrations == 2)
            #expect(server.pushed.unknownClients == [first.clientID])
            #expect(console.lines.contains { $0.contains("registering again") }, "\(console.transcript)")
            // One browser visit for the second sign-in, with the new client: the refusal came before any browser.
            #expect(console.opened.count == 1, "\(console.opened)")
            #expect(try Self.query(try #require(console.opened.first))["client_id"] == outcome.clientID)
            #expect(server.authorizeQueries.map { $0["client_id"] } == [first.clientID, outcome.clientID])
            let store = DiscoveredSignInStore(directory: scratch.state)
            #expect(try store.registration(issuer: server.baseURL)?.clientID == outcome.clientID)
        }
    }

    @Test("a server whose pushes refuse even the client it has just registered: one new registration, then the failure")
    func refusesEveryClient() async throws {
        try await DiscoveredSignInTests.withServer(Self.pushing) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            server.refuseEveryClient()
            let console = ScriptedConsole(browser: true)
            let failure = try #require(
                DiscoveredSignInTests.failure(
                    try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: console)))
            #expect(failure.message.contains("refused a client it has just registered"), "\(failure.message)")
            #expect(server.registrations == 2)
            #expect(console.opened.isEmpty)
        }
    }

    @Test("a push refused otherwise fails at once with the server's error, and registers nothing again")
    func pushRefused() async throws {
        var settings = Self.pushing
        settings.pushRefusal = FakeAuthorizationServer.PushRefusal(
            error: "invalid_request", description: "The redirect_uri is not allowed here")
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            let console = ScriptedConsole(browser: true)
            let failure = try #require(
                DiscoveredSignInTests.failure(
                    try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: console)))
            #expect(failure.kind == .misconfigured)
            #expect(failure.message.contains("pushed authorization request (RFC 9126)"), "\(failure.message)")
            #expect(failure.message.contains(#""invalid_request""#), "\(failure.message)")
            #expect(failure.message.contains("The redirect_uri is not allowed here"), "\(failure.message)")
            #expect(console.opened.isEmpty && server.registrations == 1)
        }
    }

    @Test(
        "without pushes, the waiting line for a stored registration says what to do when the browser shows a client error"
    )
    func forgetRegistrationHint() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            // A new registration: nothing to forget yet.
            let first = ScriptedConsole(browser: true)
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: first).get()
            #expect(!first.lines.contains { $0.contains(Self.hint) }, "\(first.transcript)")

            let second = ScriptedConsole(browser: true)
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: second).get()
            let lines = second.lines
            let waiting = try #require(lines.firstIndex { $0.contains("Waiting for the sign-in to finish") })
            let next = lines.dropFirst(waiting + 1).first ?? ""
            #expect(next.contains(Self.hint), "\(lines)")
            #expect(next.contains("bearer-proxy login /mcp"))
        }
    }
}
