import Foundation
import NIOHTTP1
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

/// A discovered route's own sign-in with DPoP (RFC 9449), over real sockets against the discovery fake in its DPoP
/// mode, which checks every proof as a server must: the sign-in's key (one file, 0600, every process's), `dpop_jkt`
/// on the authorization request, proofs on the push, the code exchange and every refresh, a nonce challenge met once
/// and never looped, the bound token sent upstream as `Authorization: DPoP` with a proof — and a bearer-only server
/// served as before.
@Suite struct DiscoveredDPoPTests {
    /// A server that lists ES256 in `dpop_signing_alg_values_supported`.
    static var dpopServer: FakeAuthorizationServer.Settings {
        var settings = FakeAuthorizationServer.Settings()
        settings.dpop.algorithms = ["ES256"]
        return settings
    }

    /// The sign-in stored for `server`'s route, and its DPoP key file.
    static func stored(
        _ server: FakeAuthorizationServer, _ scratch: StoreScratchDirectory
    ) throws -> (signIn: PersistedDiscoveredSignIn, keyFile: DPoPKeyFile, store: DiscoveredSignInStore) {
        let (store, key) = try DiscoveredSignInTests.stored(server, scratch)
        return (try #require(try store.signIn(key)), store.proofKeyFile(key), store)
    }

    /// The private scalar as the key file holds it, for the scans of output.
    static func privateKeyText(_ file: DPoPKeyFile) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: try #require(file.path)))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["privateKey"] as? String)
    }

    static func mode(_ path: String?) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: try #require(path))
        return try #require(attributes[.posixPermissions] as? Int)
    }

    /// The claims of a JWT (no verification).
    static func claims(_ token: String) throws -> [String: Any] {
        let segments = token.split(separator: ".")
        try #require(segments.count == 3)
        let payload = try #require(FakeIdentityJWT.decodeBase64URL(segments[1]))
        return try #require(FakeIdentityJWT.object(payload))
    }

    @Test(
        "sign-in with DPoP: a key in a 0600 file, dpop_jkt on the authorization request, a proof on the code exchange, a DPoP token bound by cnf.jkt"
    )
    func signIn() async throws {
        try await DiscoveredSignInTests.withServer(Self.dpopServer) { server, scratch in
            let console = ScriptedConsole(browser: true)
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state, console: console).get()
            let (signIn, keyFile, _) = try Self.stored(server, scratch)
            let key = try #require(keyFile.storedKey())
            #expect(try Self.mode(keyFile.path) == 0o600)

            #expect(server.authorizeQueries.first?["dpop_jkt"] == key.thumbprint)
            let exchange = try #require(server.dpopChecks.first { $0.path == "/token" })
            #expect(exchange.hadProof && exchange.error == nil && exchange.thumbprint == key.thumbprint)
            #expect(signIn.proofKeyThumbprint == key.thumbprint && signIn.tokenType == "DPoP")
            let access = try #require(signIn.accessToken)
            #expect(server.boundAccessTokens[access] == key.thumbprint)
            let confirmation = try #require(try Self.claims(access)["cnf"] as? [String: Any])
            #expect(confirmation["jkt"] as? String == key.thumbprint)
            let refresh = try #require(signIn.refreshToken)
            #expect(server.binding(ofRefreshToken: refresh) == key.thumbprint)

            // The token the store gives the route is bound: presented only with a proof.
            let token = try #require(DiscoveredTokenRequest.accessToken(signIn, scopes: ScopeSet(["a"])))
            #expect(token.boundKey == key.thumbprint && token.authorizationHeader.hasPrefix("DPoP "))

            let secret = try Self.privateKeyText(keyFile)
            for shown in [console.transcript] + console.opened {
                #expect(!shown.contains(secret))
                for proof in server.dpopProofs { #expect(!shown.contains(proof)) }
            }
        }
    }

    @Test(
        "a refresh proves the same key, the upstream gets Authorization: DPoP with a proof, and no proof, token or key reaches the log or /-/status"
    )
    func refreshAndUpstream() async throws {
        var settings = Self.dpopServer
        settings.dpop.required = true
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (before, keyFile, store) = try Self.stored(server, scratch)
            let thumbprint = try #require(before.proofKeyThumbprint)
            try store.expireAccessToken(before.key)
            let lines = CapturingLogHandler.Store()
            let status = try await ProxyHarness.with(
                routes: server.routes(), stateDirectory: scratch.state,
                logger: CapturingLogHandler.logger(into: lines)
            ) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x?q=1")
                #expect(response.status == .ok, "\(response.bodyText)")
                #expect(try response.jsonObject()["audience"] as? String == server.resource)
                return try await TestClient.send(port: proxy.port, uri: "/-/status").bodyText
            }
            let tokenChecks = server.dpopChecks.filter { $0.path == "/token" }
            #expect(tokenChecks.count == 2)
            #expect(tokenChecks.allSatisfy { $0.error == nil && $0.thumbprint == thumbprint })
            #expect(server.tokenForms.last?["grant_type"] == "refresh_token")
            // The upstream's proof: the same key, htu without the query (checked by the fake), and ath.
            let upstream = try #require(server.dpopChecks.last { $0.path == "/mcp/x" })
            #expect(upstream.error == nil && upstream.thumbprint == thumbprint)

            let after = try #require(try store.signIn(before.key))
            #expect(after.refreshToken != before.refreshToken && after.tokenType == "DPoP")
            #expect(server.binding(ofRefreshToken: try #require(after.refreshToken)) == thumbprint)
            #expect(keyFile.storedKey()?.thumbprint == thumbprint)

            // The scheme and the key's thumbprint, never the key.
            let route = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["routes"]
                    as? [[String: Any]])
            let discovered = try #require(route.first?["discovered"] as? [String: Any])
            #expect(discovered["tokenType"] as? String == "dpop")
            #expect(discovered["dpopKeyThumbprint"] as? String == thumbprint)

            let secrets = [try Self.privateKeyText(keyFile)] + server.dpopProofs + server.issuedTokens
            for text in lines.all + [status] {
                for secret in secrets { #expect(!text.contains(secret)) }
            }
        }
    }

    @Test(
        "a nonce demanded at the push and the token endpoint: met once at the push, and carried to the token endpoint")
    func nonceAtPushAndToken() async throws {
        var settings = Self.dpopServer
        settings.offersPushedRequests = true
        settings.dpop.nonce = .required
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (signIn, keyFile, _) = try Self.stored(server, scratch)
            let thumbprint = try #require(keyFile.storedKey()?.thumbprint)
            #expect(signIn.proofKeyThumbprint == thumbprint)
            let pushes = server.dpopChecks.filter { $0.path == "/par" }
            #expect(pushes.map(\.error) == ["use_dpop_nonce", nil])
            #expect(pushes.last?.thumbprint == thumbprint && pushes.last?.nonce == "as-nonce-1")
            #expect(server.pushed.forms.last?["dpop_jkt"] == thumbprint)
            // The nonce the push was given is the server's, kept for its token endpoint: no second challenge.
            let exchanges = server.dpopChecks.filter { $0.path == "/token" }
            #expect(exchanges.map(\.error) == [nil] && exchanges.first?.nonce == "as-nonce-1")
        }
    }

    @Test(
        "a server that answers every proof with a new nonce gets two requests, never a third",
        arguments: [true, false])
    func nonceNeverLooped(pushes: Bool) async throws {
        var settings = Self.dpopServer
        settings.offersPushedRequests = pushes
        settings.dpop.nonce = .rotateEveryRequest
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            let outcome = try await DiscoveredSignInTests.signIn(server, state: scratch.state)
            let failure = try #require(DiscoveredSignInTests.failure(outcome))
            #expect(failure.message.contains("use_dpop_nonce"), "\(failure.message)")
            #expect(server.dpopChecks.filter { $0.path == (pushes ? "/par" : "/token") }.count == 2)
        }
    }

    @Test(
        "the refresh token is bound: refused with another key or without a proof; the route's flow refreshes with the sign-in's key"
    )
    func boundRefreshToken() async throws {
        try await DiscoveredSignInTests.withServer(Self.dpopServer) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (signIn, keyFile, store) = try Self.stored(server, scratch)
            let refresh = try #require(signIn.refreshToken)
            let form = DiscoveredTokenRequest.refresh(
                refresh, resource: server.resource, client: DiscoveredClient(id: signIn.key.clientID, kind: .dynamic))
            let another = DPoPBinding(preference: .dpop, keyFile: DPoPKeyFile(), now: { Date() })
            try await DNSRebindingTests.withProvider { provider in
                for binding in [another, nil] {
                    do throws(TokenEndpointCallFailure) {
                        _ = try await provider.requestToken(at: server.baseURL + "/token", form: form, dpop: binding)
                        Issue.record(
                            "a bound refresh token was redeemed with \(binding == nil ? "no proof" : "another key")")
                    } catch {
                        guard case .rejected(let failure) = error else { throw error.tokenError }
                        #expect(failure.error == "invalid_grant")
                    }
                }
            }

            try store.expireAccessToken(signIn.key)
            try await DNSRebindingTests.withProvider { provider in
                let flow = DiscoveredRouteFlow(
                    route: "/a", upstream: server.resource, store: store, provider: provider,
                    addresses: DiscoveredRouteTokens.addresses(
                        of: DiscoveredSignInTests.route(server), settings: DiscoverySettings()),
                    logger: ProxyHarness.silentLogger, now: { Date() })
                let token = try await flow.acquireToken(TokenRequest(scopes: ScopeSet(["a"])))
                #expect(token.boundKey == keyFile.storedKey()?.thumbprint && token.boundKey != nil)
            }
        }
    }

    @Test("another process — serve, then logout — uses the same key file; logout deletes it")
    func anotherProcess() async throws {
        try await DiscoveredSignInTests.withServer(Self.dpopServer) { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                _ = try await DiscoveredSignInTests.signIn(server, state: files.stateDirectory).get()
                let store = files.store
                let key = try #require(try store.routeKey(upstream: server.resource))
                let keyFile = store.proofKeyFile(key)
                let thumbprint = try #require(keyFile.storedKey()?.thumbprint)
                try store.expireAccessToken(key)
                try await DiscoveredProcessesTests.withServe(files) { port in
                    let response = try await TestClient.send(port: port, uri: "/mcp/x")
                    #expect(response.status == .ok, "\(response.bodyText)")
                }
                let refreshes = server.dpopChecks.filter { $0.path == "/token" }
                #expect(refreshes.count == 2 && refreshes.allSatisfy { $0.thumbprint == thumbprint })
                #expect(server.dpopChecks.last { $0.path == "/mcp/x" }?.thumbprint == thumbprint)
                #expect(try Self.mode(keyFile.path) == 0o600)

                // `token ROUTE` in a third process: the bound token alone is refused; with --dpop-proof, a proof of
                // the sign-in's key for that one request.
                let alone = try await files.run(["token", "mcp"])
                #expect(alone.status == 1 && alone.stdout.isEmpty && alone.stderr.contains("DPoP-bound"))
                let url = server.resource + "/y"
                let proved = try await files.run(["token", "mcp", "--dpop-proof", "GET", url])
                #expect(proved.status == 0, "\(proved.stderr)")
                let lines = proved.stdout.split(separator: "\n").map(String.init)
                try #require(lines.count == 2)
                var headers = HTTPHeaders()
                headers.add(name: "DPoP", value: lines[1])
                var verifier = DPoPProofVerifier()
                let accepted = try verifier.verify(
                    headers, method: "GET", uri: url, now: Date(), nonce: nil, accessToken: lines[0]
                ).get()
                #expect(accepted.thumbprint == thumbprint)

                // `status` names the scheme and the key's thumbprint, never the key or a proof.
                let status = try await files.run(["status"])
                #expect(status.status == 0 && status.stdout.contains("DPoP key jkt \(thumbprint)"), "\(status.stdout)")
                let secret = try Self.privateKeyText(keyFile)
                #expect(!status.stdout.contains(secret) && !server.dpopProofs.contains { status.stdout.contains($0) })

                let logout = try await files.run(["logout", "mcp"])
                #expect(logout.status == 0, "\(logout.stderr)")
                #expect(!FileManager.default.fileExists(atPath: try #require(keyFile.path)))
                for proof in server.dpopProofs {
                    #expect(!logout.stdout.contains(proof) && !logout.stderr.contains(proof))
                }
            }
        }
    }

    @Test("an auto route at a resource that takes only DPoP-bound tokens proves a key, though its server lists no alg")
    func resourceRequiresDPoP() async throws {
        var settings = FakeAuthorizationServer.Settings()
        settings.dpop.required = true
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (signIn, keyFile, _) = try Self.stored(server, scratch)
            let thumbprint = try #require(keyFile.storedKey()?.thumbprint)
            #expect(signIn.proofKeyThumbprint == thumbprint && signIn.tokenType == "DPoP")
            #expect(server.dpopChecks.first { $0.path == "/token" }?.thumbprint == thumbprint)
        }
    }

    @Test("a bearer-only server: no proof, no dpop_jkt, no key file, and the upstream gets a bearer token")
    func bearerOnlyServer() async throws {
        try await DiscoveredSignInTests.withServer { server, scratch in
            _ = try await DiscoveredSignInTests.signIn(server, state: scratch.state).get()
            let (signIn, keyFile, store) = try Self.stored(server, scratch)
            #expect(signIn.proofKeyThumbprint == nil && signIn.tokenType == nil)
            #expect(keyFile.storedKey() == nil)
            #expect(server.authorizeQueries.first?["dpop_jkt"] == nil)
            try store.expireAccessToken(signIn.key)
            try await ProxyHarness.with(routes: server.routes(), stateDirectory: scratch.state) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/a/x")
                #expect(response.status == .ok)
            }
            #expect(server.tokenForms.map { $0["grant_type"] } == ["authorization_code", "refresh_token"])
            #expect(server.dpopChecks.allSatisfy { !$0.hadProof })
            #expect(server.bearers.count == 1)
        }
    }

    @Test("a resource that takes only DPoP-bound tokens, and a route whose tokenType is bearer: nothing is signed in")
    func bearerRouteOnDPoPResource() async throws {
        var settings = Self.dpopServer
        settings.dpop.required = true
        try await DiscoveredSignInTests.withServer(settings) { server, scratch in
            var route = DiscoveredSignInTests.route(server)
            route.tokenType = .bearer
            let found = try await DiscoveredAuthorization.discover(
                for: route, settings: DiscoverySettings(), logger: ProxyHarness.silentLogger)
            #expect(found.dpopBoundAccessTokensRequired && found.dpopSigningAlgorithms == ["ES256"])
            do throws(SignInFailure) {
                _ = try await DiscoveredSignIn.run(
                    route: route, settings: DiscoverySettings(), found: found, caFile: nil,
                    stateDirectory: scratch.state, console: ScriptedConsole(browser: true), noBrowser: false,
                    logger: ProxyHarness.silentLogger)
                Issue.record("a bearer route signed in at a resource that takes only DPoP-bound tokens")
            } catch {
                #expect(error.message.contains("dpop_bound_access_tokens_required"), "\(error.message)")
            }
            #expect(server.authorizeQueries.isEmpty)
        }
    }
}
