import Foundation
import NIOCore
import NIOPosix
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

/// DNS rebinding against discovery and a discovered route's sign-in (#25), on real sockets: a name answers a
/// global address when it is checked and 127.0.0.1 afterwards. Every request must connect to the addresses its
/// check saw — the name resolved once — so the internal service on 127.0.0.1 (``RebindingWorld/victim``) is never
/// contacted, while the server at the address checked is reached over TLS by its name (SNI, the certificate, the
/// `Host` header). 127.0.0.2 plays the global address: nothing may leave this machine.
@Suite struct DNSRebindingTests {
    typealias World = RebindingWorld
    typealias Page = FakeDiscoveryPage

    /// The resource on `mcp.rebind.test`, its authorization server on `as.rebind.test` and that server's token
    /// endpoint on `token.rebind.test`: three hosts, each resolved for itself.
    static let pages: [String: Page] = [
        "/mcp": FakeDiscoveryServer.challenge(
            #"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#),
        "/.well-known/oauth-protected-resource/mcp": Page(
            body: #"{"resource": "{origin}/mcp", "authorization_servers": ["https://as.rebind.test:{port}"]}"#),
        "/.well-known/oauth-authorization-server": Page(
            body: #"{"issuer": "{origin}", "authorization_endpoint": "{origin}/authorize", "#
                + #""token_endpoint": "https://token.rebind.test:{port}/token", "#
                + #""code_challenge_methods_supported": ["S256"]}"#),
        "/token": Page(body: #"{"access_token": "fresh-access", "token_type": "Bearer", "expires_in": 3600}"#),
        "/revoke": Page(body: ""),
    ]

    static func with<T>(_ body: (World) async throws -> T) async throws -> T {
        try await World.with(pages: Self.pages, body)
    }

    /// A discovery of the world's route as `bearer-proxy` runs one: its requests share a client per host and judged
    /// address, shut down at its end (``PinnedConnections``).
    static func discover(
        _ world: World, _ resolver: RebindingResolver, settings: DiscoverySettings = DiscoverySettings()
    ) async throws(DiscoveryError) -> DiscoveredAuthorization {
        try await DiscoveryClient.with(
            caFile: World.caFile, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: ProxyHarness.silentLogger, connect: connectDeadline
        ) { (transport) async throws(DiscoveryError) -> DiscoveredAuthorization in
            try await ResourceDiscovery(
                route: world.upstream, settings: settings, transport: transport,
                addresses: world.policy(resolver, settings: settings), logger: ProxyHarness.silentLogger
            ).run()
        }
    }

    /// The clients' connect timeout here: the product's 5 s covers the TLS context a client builds (the system's
    /// roots parsed) and the handshake, which a suite on a loaded 2-core machine can take longer than; every
    /// connection in these tests is to 127.0.0.x, and a refused one fails at once whatever the timeout.
    static let connectDeadline: TimeAmount = .seconds(60)

    static var client: DiscoveryClient {
        DiscoveryClient(
            caFile: World.caFile, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: ProxyHarness.silentLogger, connect: connectDeadline)
    }

    /// Runs `body` with an identity provider client trusting the world's CA, shut down afterwards whatever happens
    /// (an HTTP client left running traps when it is freed).
    static func withProvider<T>(_ body: (IdentityProviderClient) async throws -> T) async throws -> T {
        let provider = IdentityProviderClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger,
            caFile: World.caFile, connect: connectDeadline)
        do {
            let result = try await body(provider)
            try await provider.shutdown()
            return result
        } catch {
            try? await provider.shutdown()
            throw error
        }
    }

    @Test(
        "a name answering a global address to the check and 127.0.0.1 after it: the fetch reaches the address checked")
    func theCheckedAddressIsTheOneReached() async throws {
        try await Self.with { world in
            let resolver = RebindingResolver(first: [World.global], then: [World.internalAddress])
            let url = try await world.policy(resolver).pin(
                world.url("as", "/.well-known/oauth-authorization-server"), role: "authorization-server metadata URL")
            #expect(url.addresses == [World.global])
            let (status, body) = try await Self.client.fetch(url)
            #expect(status == 200 && String(decoding: body, as: UTF8.self).contains("issuer"))
            // Resolved once: the connection did not ask again (the second answer would have been 127.0.0.1).
            #expect(resolver.questions(about: "as.rebind.test") == 1)
            #expect(world.victim.acceptedConnections == 0)
            // TLS and Host by the name: the certificate names *.rebind.test, not 127.0.0.2.
            let request = try #require(world.server.requests.first)
            #expect(request.head.header("host") == "as.rebind.test:\(world.port)")
        }
    }

    @Test("a name that rebinds between discovery's requests is refused at the request that would reach 127.0.0.1")
    func rebindingBetweenRequestsIsRefused() async throws {
        try await Self.with { world in
            let resolver = RebindingResolver(first: [World.global], then: [World.internalAddress])
            let metadataURL = world.url("mcp", "/.well-known/oauth-protected-resource/mcp")
            await #expect(
                throws: DiscoveryError.privateAddress(
                    role: "protected-resource metadata URL", url: metadataURL, address: "127.0.0.1", reach: "loopback")
            ) {
                try await Self.discover(world, resolver)
            }
            // The probe went to the address the name first resolved to; nothing went to the second answer.
            #expect(world.server.requests.map(\.head.uri) == ["/mcp"])
            #expect(world.victim.acceptedConnections == 0)
        }
    }

    @Test("a legitimate discovery across three hosts: each request resolves its host once and reaches what was judged")
    func legitimateDiscovery() async throws {
        try await Self.with { world in
            let resolver = RebindingResolver(always: [World.global])
            let found = try await Self.discover(world, resolver)
            #expect(found.issuer == world.url("as"))
            #expect(found.tokenEndpoint == world.url("token", "/token"))
            // mcp: the probe and the metadata; as: the issuer's check, its metadata and the authorization
            // endpoint's check; token: its check — one question each, none more for a connection.
            #expect(resolver.questions(about: "mcp.rebind.test") == 2)
            #expect(resolver.questions(about: "as.rebind.test") == 3)
            #expect(resolver.questions(about: "token.rebind.test") == 1)
            #expect(world.server.requests.count == 3)
            #expect(world.victim.acceptedConnections == 0)
        }
    }

    @Test("one address of several is internal: the name is refused before any connection")
    func oneInternalAddressAmongGlobalOnes() async throws {
        try await Self.with { world in
            let resolver = RebindingResolver(always: [World.global, World.internalAddress])
            await #expect(throws: DiscoveryError.self) {
                try await world.policy(resolver).pin(world.url("as", "/x"), role: "authorization server")
            }
            #expect(world.server.acceptedConnections == 0 && world.victim.acceptedConnections == 0)
        }
    }

    @Test("the next judged address is tried only when no connection was made, and no other address ever")
    func nextAddressAfterARefusedConnection() async throws {
        try await Self.with { world in
            let resolver = RebindingResolver(first: [World.refusing, World.global], then: [World.internalAddress])
            let url = try await world.policy(resolver).pin(
                world.url("as", "/.well-known/oauth-authorization-server"), role: "authorization-server metadata URL")
            let (status, _) = try await Self.client.fetch(url)
            #expect(status == 200)
            #expect(resolver.questions(about: "as.rebind.test") == 1)
            #expect(world.server.requests.count == 1 && world.victim.acceptedConnections == 0)
        }
    }

    /// A discovered route's stored sign-in with the authorization server `as.rebind.test` and the token endpoint
    /// `token.rebind.test` (another host than the resource's and the metadata's), its access token expired.
    static func storedSignIn(_ world: World, in store: DiscoveredSignInStore) throws -> DiscoveredSignInKey {
        let key = DiscoveredSignInKey(issuer: world.url("as"), clientID: "mine", resource: world.url("mcp", "/mcp"))
        try store.updateSignIn(key) {
            $0 = PersistedDiscoveredSignIn(
                key: key, clientKind: "configured", tokenEndpoint: world.url("token", "/token"),
                revocationEndpoint: world.url("token", "/revoke"), scopes: ["mcp:read"], refreshToken: "the-refresh",
                accessToken: "stale", expiresOn: Date(timeIntervalSinceNow: -60))
        }
        try store.setRouteKey(key, upstream: world.upstream.url)
        return key
    }

    @Test("the token endpoint, judged at sign-in, rebinds before a refresh: the refresh token is not sent")
    func tokenEndpointRebindsBeforeARefresh() async throws {
        try await Self.with { world in
            let scratch = try StoreScratchDirectory()
            defer { scratch.remove() }
            let store = DiscoveredSignInStore(directory: scratch.state)
            let key = try Self.storedSignIn(world, in: store)
            // The first refresh finds the global address, the second 127.0.0.1.
            let resolver = RebindingResolver(first: [World.global], then: [World.internalAddress])
            try await Self.withProvider { provider in
                try await Self.refreshTwice(world, store, key, resolver, provider)
            }
            #expect(resolver.questions(about: "token.rebind.test") == 2)
            #expect(world.server.requests.count == 1 && world.victim.acceptedConnections == 0)
        }
    }

    /// Two refreshes of the stored sign-in through a route's flow: the first must succeed, the second must be refused.
    static func refreshTwice(
        _ world: World, _ store: DiscoveredSignInStore, _ key: DiscoveredSignInKey, _ resolver: RebindingResolver,
        _ provider: IdentityProviderClient
    ) async throws {
        let flow = DiscoveredRouteFlow(
            route: "/mcp", upstream: world.upstream.url, store: store, provider: provider,
            addresses: world.policy(resolver), logger: ProxyHarness.silentLogger, now: { Date() })
        let request = TokenRequest(scopes: ScopeSet(["mcp:read"]))
        let token = try await flow.acquireToken(request)
        #expect(token.value == "fresh-access")
        #expect(world.server.requests.map(\.head.uri) == ["/token"])
        #expect(world.server.requests.first?.head.header("host") == "token.rebind.test:\(world.port)")

        try store.updateSignIn(key) { $0?.expiresOn = Date(timeIntervalSinceNow: -60) }
        do throws(TokenError) {
            _ = try await flow.acquireToken(request)
            Issue.record("a refresh went ahead against a token endpoint that now reaches 127.0.0.1")
        } catch {
            guard case .misconfigured(let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("127.0.0.1") && reason.contains("token endpoint"))
        }
    }

    @Test("the token endpoint rebinds between discovery and the code exchange: the code is not sent")
    func tokenEndpointRebindsBeforeTheCodeExchange() async throws {
        try await Self.with { world in
            let settings = DiscoverySettings(clientID: "mine")
            let found = try await Self.discover(world, RebindingResolver(always: [World.global]), settings: settings)
            let scratch = try StoreScratchDirectory()
            defer { scratch.remove() }
            let exchanges = world.server.requests.count
            // The sign-in's own questions: the token endpoint now answers 127.0.0.1.
            let rebound = RebindingResolver(always: [World.internalAddress])
            let refused = try await Self.withProvider { provider in
                try await Self.signIn(world, found, settings, scratch, provider, resolver: rebound)
            }
            guard case .failure(let failure) = refused else {
                Issue.record("a code was exchanged at a token endpoint that now reaches 127.0.0.1")
                return
            }
            #expect(failure.kind == .misconfigured && failure.message.contains("127.0.0.1"))
            #expect(rebound.questions(about: "token.rebind.test") == 1)
            #expect(world.server.requests.count == exchanges && world.victim.acceptedConnections == 0)

            // The same sign-in where the name still answers what was judged: the code goes there, by name.
            let signedIn = try await Self.withProvider { provider in
                try await Self.signIn(
                    world, found, settings, scratch, provider, resolver: RebindingResolver(always: [World.global]))
            }
            #expect(try signedIn.get().clientID == "mine")
            #expect(world.server.requests.last?.head.uri == "/token")
            #expect(world.server.requests.last?.head.header("host") == "token.rebind.test:\(world.port)")
            #expect(world.victim.acceptedConnections == 0)
        }
    }

    /// `login ROUTE` without a browser: the console answers with the redirect the authorization server would make
    /// (the `state` and `redirect_uri` of the URL it was shown, and a code).
    static func signIn(
        _ world: World, _ found: DiscoveredAuthorization, _ settings: DiscoverySettings,
        _ scratch: StoreScratchDirectory, _ provider: IdentityProviderClient, resolver: RebindingResolver
    ) async throws -> Result<DiscoveredSignIn.Outcome, SignInFailure> {
        final class Shown: Sendable { let console = Mutex<ScriptedConsole?>(nil) }
        let shown = Shown()
        let console = ScriptedConsole { _ in
            guard let url = shown.console.withLock({ $0 })?.lines.first(where: { $0.contains("state=") }),
                let query = URLComponents(string: url.trimmingCharacters(in: .whitespaces))?.queryItems,
                let state = query.first(where: { $0.name == "state" })?.value,
                let redirect = query.first(where: { $0.name == "redirect_uri" })?.value
            else { return nil }
            return redirect + "?code=the-code&state=" + state
        }
        shown.console.withLock { $0 = console }
        let signIn = DiscoveredSignIn(
            route: Route(prefix: "/mcp", upstream: world.upstream, auth: .discover(settings)), settings: settings,
            found: found, store: DiscoveredSignInStore(directory: scratch.state), provider: provider,
            registrar: client, addresses: world.policy(resolver, settings: settings),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, timeout: .seconds(30))
        do throws(SignInFailure) {
            return .success(try await signIn.run(console: console, noBrowser: true))
        } catch {
            return .failure(error)
        }
    }

    @Test("a revocation endpoint that now reaches 127.0.0.1 gets nothing; one that reaches the address judged does")
    func revocationIsPinned() async throws {
        try await Self.with { world in
            try await Self.withProvider { provider in try await Self.revokeTwice(world, provider) }
        }
    }

    static func revokeTwice(_ world: World, _ provider: IdentityProviderClient) async throws {
        let endpoint = world.url("token", "/revoke")
        let refused = await DiscoveredTokenRequest.revoke(
            "the-refresh", at: endpoint, clientID: "mine", clientSecret: nil, provider: provider,
            addresses: world.policy(RebindingResolver(always: [World.internalAddress])))
        #expect(refused.contains("not sent"))
        #expect(world.server.acceptedConnections == 0 && world.victim.acceptedConnections == 0)

        let revoked = await DiscoveredTokenRequest.revoke(
            "the-refresh", at: endpoint, clientID: "mine", clientSecret: nil, provider: provider,
            addresses: world.policy(RebindingResolver(first: [World.global], then: [World.internalAddress])))
        #expect(revoked == "the refresh token was revoked at the authorization server")
        #expect(world.server.requests.map(\.head.uri) == ["/revoke"])
        #expect(world.victim.acceptedConnections == 0)
    }

    @Test("registration goes to the addresses judged for it")
    func registrationIsPinned() async throws {
        try await World.with(pages: ["/register": Page(status: 201, body: #"{"client_id": "dyn-1"}"#)]) { world in
            let resolver = RebindingResolver(first: [World.global], then: [World.internalAddress])
            let endpoint = try await world.policy(resolver).pin(
                world.url("as", "/register"), role: "registration endpoint")
            let registered = try await Self.client.register(
                ClientRegistrationRequest(redirectPort: 8400, scopes: []), at: endpoint)
            #expect(registered.clientID == "dyn-1")
            #expect(resolver.questions(about: "as.rebind.test") == 1)
            #expect(world.server.requests.map(\.head.method) == ["POST"])
            #expect(world.victim.acceptedConnections == 0)
        }
    }
}
