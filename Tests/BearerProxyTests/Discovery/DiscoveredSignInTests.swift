import Foundation
import Logging
import Synchronization
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

/// `bearer-proxy login ROUTE` against a fake authorization server over real sockets (#25 item 4): code + PKCE
/// S256 with the route's `resource`, `state` and RFC 9207 `iss` checked, the loopback redirect, dynamic
/// registration kept per server, and what is stored.
@Suite struct DiscoveredSignInTests {
    typealias Outcome = Result<DiscoveredSignIn.Outcome, SignInFailure>

    static func route(
        _ server: FakeAuthorizationServer, settings: DiscoverySettings = DiscoverySettings(), caFile: String? = nil
    ) -> Route {
        Route(
            prefix: "/mcp", upstream: Upstream(parsing: server.resource)!, auth: .discover(settings),
            tls: TLSSettings(caFile: caFile))
    }

    /// Discovers the route and signs in, a test browser following every URL the sign-in opens.
    static func signIn(
        _ server: FakeAuthorizationServer, state: StateDirectory, settings: DiscoverySettings = DiscoverySettings(),
        console: ScriptedConsole = ScriptedConsole(browser: true), noBrowser: Bool = false, caFile: String? = nil,
        environment: [String: String] = [:], scopes: [String]? = nil, logger: Logger = ProxyHarness.silentLogger
    ) async throws -> Outcome {
        let route = route(server, settings: settings, caFile: caFile)
        var found = try await DiscoveredAuthorization.discover(for: route, settings: settings, logger: logger)
        // As `login ROUTE --scopes` does.
        if let scopes { found.scopes = scopes }
        async let browsing: Void = browse(console)
        let outcome: Outcome
        do throws(SignInFailure) {
            outcome = .success(
                try await DiscoveredSignIn.run(
                    route: route, settings: settings, found: found, caFile: caFile, stateDirectory: state,
                    console: console, noBrowser: noBrowser, logger: logger, environment: environment))
        } catch {
            outcome = .failure(error)
        }
        console.close()
        await browsing
        return outcome
    }

    /// Plays the person: opens each URL the sign-in asks to open.
    static func browse(_ console: ScriptedConsole) async {
        while let url = await console.nextOpenedURL() { _ = try? await TestBrowser.open(url) }
    }

    static func failure(_ outcome: Outcome) -> SignInFailure? {
        if case .failure(let failure) = outcome { return failure }
        return nil
    }

    /// The store of `scratch` and the key of the sign-in the route to `server`'s resource uses (after ``signIn``).
    static func stored(
        _ server: FakeAuthorizationServer, _ scratch: StoreScratchDirectory
    ) throws -> (store: DiscoveredSignInStore, key: DiscoveredSignInKey) {
        let store = DiscoveredSignInStore(directory: scratch.state)
        return (store, try #require(try store.routeKey(upstream: server.resource)))
    }

    static func withServer(
        _ settings: FakeAuthorizationServer.Settings = .init(), tls: Bool = false,
        _ body: (FakeAuthorizationServer, StoreScratchDirectory) async throws -> Void
    ) async throws {
        let server = try await FakeAuthorizationServer.start(settings, tls: tls)
        let scratch = try StoreScratchDirectory()
        do {
            try await body(server, scratch)
        } catch {
            await server.shutdown()
            scratch.remove()
            throw error
        }
        await server.shutdown()
        scratch.remove()
    }

    @Test(
        "two sign-ins with one authorization server at once: the second waits for the first and uses its sign-in — one tab, one registration"
    )
    func oneSignInAtATime() async throws {
        try await Self.withServer { server, scratch in
            let route = Self.route(server)
            let found = try await DiscoveredAuthorization.discover(
                for: route, settings: DiscoverySettings(), logger: ProxyHarness.silentLogger)
            let first = ScriptedConsole(browser: true)
            let second = ScriptedConsole(browser: true)
            @Sendable func signIn(_ console: ScriptedConsole) async -> Outcome {
                do throws(SignInFailure) {
                    return .success(
                        try await DiscoveredSignIn.run(
                            route: route, settings: DiscoverySettings(), found: found, caFile: nil,
                            stateDirectory: scratch.state, console: console, noBrowser: false,
                            logger: ProxyHarness.silentLogger))
                } catch {
                    return .failure(error)
                }
            }
            async let firstOutcome = signIn(first)
            // The first has its tab open, and holds the sign-in lock until it is done.
            let url = try #require(await first.nextOpenedURL())
            async let secondOutcome = signIn(second)
            // Were the second to open a tab of its own, it would be followed (the test then fails, not hangs).
            async let secondBrowsing: Void = Self.browse(second)
            try await withTimeout(waitingFor: "the second sign-in to wait for the first") {
                while !second.lines.contains(where: { $0.contains("waiting for it") }) {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            _ = try await TestBrowser.open(url)
            let a = try await firstOutcome.get()
            let b = try await secondOutcome.get()
            first.close()
            second.close()
            await secondBrowsing
            #expect(second.opened.isEmpty, "the second sign-in opened a tab of its own")
            #expect(server.authorizeQueries.count == 1)
            #expect(server.registrations == 1)
            #expect(b.clientID == a.clientID && b.issuer == a.issuer && b.hasRefreshToken)
            #expect(second.lines.contains { $0.contains("Signed in by the other sign-in") })
        }
    }

    @Test("a sign-in registers a client, sends the same resource in authorize and exchange, and stores 0600")
    func success() async throws {
        try await Self.withServer { server, scratch in
            let console = ScriptedConsole(browser: true)
            let outcome = try await Self.signIn(server, state: scratch.state, console: console).get()
            #expect(outcome.issuer == server.baseURL)
            #expect(outcome.clientKind == "dynamic" && outcome.clientID == "client-1")
            #expect(outcome.resource == server.resource && outcome.hasRefreshToken)
            #expect(server.registrations == 1)
            let authorize = try #require(server.authorizeQueries.first)
            #expect(authorize["resource"] == server.resource)
            #expect(authorize["code_challenge_method"] == "S256")
            #expect(authorize["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)
            #expect(authorize["state"]?.count == 43)
            let exchange = try #require(server.tokenForms.first)
            #expect(exchange["resource"] == server.resource && exchange["grant_type"] == "authorization_code")
            #expect(exchange["code_verifier"]?.count == 43)
            // Stored under (issuer, client, resource), found through the route's upstream.
            let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
            #expect(key == DiscoveredSignInKey(issuer: server.baseURL, clientID: "client-1", resource: server.resource))
            let stored = try #require(try store.signIn(key))
            #expect(stored.refreshToken?.hasPrefix("rt-") == true && stored.accessToken?.hasPrefix("at-") == true)
            for name in scratch.entries() where name.hasPrefix("discovered-") {
                #expect(try StoreScratchDirectory.mode(scratch.state.path + "/" + name) == 0o600)
            }
            // Nothing secret was shown: no code, verifier or token.
            #expect(!console.transcript.contains("code-") && !console.transcript.contains(exchange["code_verifier"]!))
            #expect(!console.transcript.contains(stored.refreshToken!))
            // A second sign-in reuses the registration made with this server.
            _ = try await Self.signIn(server, state: scratch.state).get()
            #expect(server.registrations == 1)
            // Each flow has its own PKCE verifier and state (RFC 7636 §4.1, RFC 6749 §10.12), held in memory only.
            let challenges = server.authorizeQueries.compactMap { $0["code_challenge"] }
            let states = server.authorizeQueries.compactMap { $0["state"] }
            let verifiers = server.tokenForms.compactMap { $0["code_verifier"] }
            #expect(challenges.count == 2 && Set(challenges).count == 2, "one code challenge per flow")
            #expect(states.count == 2 && Set(states).count == 2, "one state per flow")
            #expect(verifiers.count == 2 && Set(verifiers).count == 2, "one verifier per flow")
            for name in scratch.entries() {
                let text = (try? String(contentsOfFile: scratch.state.path + "/" + name, encoding: .utf8)) ?? ""
                for verifier in verifiers { #expect(!text.contains(verifier), "a verifier stored in \(name)") }
            }
        }
    }

    @Test("a configured clientId is used as it is: no registration")
    func configuredClient() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.preregistered = ["mine"]
        try await Self.withServer(settings) { server, scratch in
            let outcome = try await Self.signIn(
                server, state: scratch.state, settings: DiscoverySettings(clientID: "mine")
            ).get()
            #expect(outcome.clientKind == "configured" && outcome.clientID == "mine")
            #expect(server.registrations == 0)
        }
    }

    @Test("a redirect with another state is refused and nothing is stored")
    func stateMismatch() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.authorizeOutcome = .wrongState
        try await Self.withServer(settings) { server, scratch in
            let failure = try #require(Self.failure(try await Self.signIn(server, state: scratch.state)))
            #expect(failure.kind == .rejected && failure.message.contains("state"))
            #expect(server.tokenForms.isEmpty)
            #expect(try DiscoveredSignInStore(directory: scratch.state).routeKey(upstream: server.resource) == nil)
        }
    }

    @Test("a redirect naming another issuer is refused (RFC 9207 mix-up)")
    func issuerMismatch() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.authorizeOutcome = .wrongIssuer
        try await Self.withServer(settings) { server, scratch in
            let failure = try #require(Self.failure(try await Self.signIn(server, state: scratch.state)))
            #expect(failure.kind == .rejected && failure.message.contains("mix-up"))
            #expect(server.tokenForms.isEmpty)
        }
    }

    @Test("a redirect without iss is refused when the server advertises it, and taken when it does not")
    func missingIssuer() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.authorizeOutcome = .noIssuer
        try await Self.withServer(settings) { server, scratch in
            let failure = try #require(Self.failure(try await Self.signIn(server, state: scratch.state)))
            #expect(failure.kind == .rejected && failure.message.contains("carries no iss"))
            server.update { $0.advertisesIssuer = false }
            _ = try await Self.signIn(server, state: scratch.state).get()
        }
    }

    @Test("the person denies the sign-in (access_denied): a clear line naming the command")
    func denied() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.authorizeOutcome = .deny
        try await Self.withServer(settings) { server, scratch in
            let failure = try #require(Self.failure(try await Self.signIn(server, state: scratch.state)))
            #expect(failure.kind == .rejected && failure.message.contains("denied"))
            #expect(failure.message.contains("bearer-proxy login /mcp"))
        }
    }

    @Test("a busy fixed redirect port is an error naming it")
    func busyPort() async throws {
        try await Self.withServer { server, scratch in
            // The fake's own port is taken.
            let failure = try #require(
                Self.failure(
                    try await Self.signIn(
                        server, state: scratch.state, settings: DiscoverySettings(redirectPort: server.port))))
            #expect(failure.kind == .misconfigured && failure.message.contains("127.0.0.1:\(server.port)"))
            #expect(failure.message.contains("redirectPort"))
            #expect(server.registrations == 0)
        }
    }

    @Test("a registration the server no longer knows (invalid_client) is dropped and made again, once")
    func staleRegistration() async throws {
        try await Self.withServer { server, scratch in
            _ = try await Self.signIn(server, state: scratch.state).get()
            server.forgetClients()
            let outcome = try await Self.signIn(server, state: scratch.state).get()
            #expect(server.registrations == 2 && outcome.clientID != "client-1")
            let store = DiscoveredSignInStore(directory: scratch.state)
            #expect(try store.registration(issuer: server.baseURL)?.clientID == outcome.clientID)
        }
    }

    @Test("a server that refuses the client it has just registered too gets one new registration, not a loop")
    func staleRegistrationOnce() async throws {
        try await Self.withServer { server, scratch in
            _ = try await Self.signIn(server, state: scratch.state).get()
            server.refuseEveryClient()
            let result = try await Self.signIn(server, state: scratch.state)
            guard case .failure(let failure) = result else {
                Issue.record("signed in at a server that refuses every client")
                return
            }
            #expect(failure.message.contains("refused a client it has just registered"), "\(failure.message)")
            #expect(server.registrations == 2, "the stale one dropped, one new one, no more")
            #expect(server.authorizeQueries.count == 3)
        }
    }

    @Test("--no-browser: the URL is printed and the pasted redirect address finishes the sign-in")
    func pastedRedirect() async throws {
        try await Self.withServer { server, scratch in
            let shown = Mutex<ScriptedConsole?>(nil)
            let console = ScriptedConsole { _ in
                guard let lines = shown.withLock({ $0?.lines }),
                    let url = lines.first(where: { $0.hasPrefix("  http") })?.dropFirst(2),
                    let visit = try? await TestBrowser.open(String(url), maximumRedirects: 0)
                else { return nil }
                return visit.final.header("location")
            }
            shown.withLock { $0 = console }
            let outcome = try await Self.signIn(server, state: scratch.state, console: console, noBrowser: true).get()
            #expect(outcome.issuer == server.baseURL)
            #expect(console.opened.isEmpty)
        }
    }

    @Test("with any port, a later sign-in listens first on the port its stored registration was made with")
    func registeredPortIsReused() async throws {
        try await Self.withServer { server, scratch in
            _ = try await Self.signIn(server, state: scratch.state).get()
            _ = try await Self.signIn(server, state: scratch.state).get()
            let redirects = server.authorizeQueries.compactMap { $0["redirect_uri"] }
            #expect(redirects.count == 2 && redirects[0] == redirects[1])
            let stored = try DiscoveredSignInStore(directory: scratch.state).registration(issuer: server.baseURL)
            #expect(stored?.redirectURI == redirects[0])
        }
    }

    @Test("when the metadata names another authorization server, login signs in there and uses nothing of the old")
    func authorizationServerChanged() async throws {
        try await Self.withServer { first, scratch in
            let second = try await FakeAuthorizationServer.start()
            do {
                _ = try await Self.signIn(first, state: scratch.state).get()
                first.update { $0.authorizationServer = second.baseURL }
                let (registrations, forms) = (first.registrations, first.tokenForms.count)
                let outcome = try await Self.signIn(first, state: scratch.state).get()
                #expect(outcome.issuer == second.baseURL && outcome.resource == first.resource)
                // The old server's registration was not shown to the new one, nor anything sent to the old one.
                #expect(second.registrations == 1 && first.registrations == registrations)
                #expect(first.tokenForms.count == forms && first.authorizeQueries.count == 1)
                #expect(second.authorizeQueries.first?["resource"] == first.resource)
                let key = try DiscoveredSignInStore(directory: scratch.state).routeKey(upstream: first.resource)
                #expect(key?.issuer == second.baseURL)
            } catch {
                await second.shutdown()
                throw error
            }
            await second.shutdown()
        }
    }
}

extension DiscoveredSignInStore {
    /// Makes the access token stored under `key` expired a minute ago: the next request refreshes it.
    func expireAccessToken(_ key: DiscoveredSignInKey) throws {
        try updateSignIn(key) { $0?.expiresOn = Date(timeIntervalSinceNow: -60) }
    }
}
