import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
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

/// DPoP at the authorization server (RFC 9449 §5, §8), on real sockets: the account's flows, built from routes.json
/// by ``AccountRuntime``, against ``FakeDPoPAuthorizationServer``, which verifies every proof as §4.3 asks.
@Suite struct DPoPTokenRequestTests {
    static let scopes = ScopeSet(["api://orders/.default"])
    static let otherScopes = ScopeSet(["api://billing/.default"])
    static let secretVariable = "DPOP_TEST_SECRET"
    static let refreshVariable = "DPOP_TEST_REFRESH_TOKEN"

    static func routes() -> String {
        [scopes, otherScopes].enumerated().map { index, scopes in
            #"{ "prefix": "/r\#(index)", "upstream": "http://127.0.0.1:9", "scopes": ["\#(scopes.scopes[0])"] }"#
        }.joined(separator: ", ")
    }

    static func clientCredentials(_ server: FakeDPoPAuthorizationServer, tokenType: String?) -> String {
        #"{ "flow": "client-credentials", "issuer": "\#(server.issuer)", "clientId": "orders-daemon", "#
            + #""clientSecretEnv": "\#(secretVariable)""#
            + (tokenType.map { #", "tokenType": "\#($0)""# } ?? "") + " }"
    }

    static func refreshToken(_ server: FakeDPoPAuthorizationServer) -> String {
        #"{ "flow": "refresh-token", "issuer": "\#(server.issuer)", "clientId": "cli", "#
            + #""refreshTokenEnv": "\#(refreshVariable)", "tokenType": "dpop" }"#
    }

    /// The account of `account` on `state` (nil: `--no-persist`).
    static func runtime(
        account: String, state: StateDirectory?, environment: [String: String] = [secretVariable: "s3cret"]
    ) throws -> AccountRuntime {
        let configuration = try TestConfigurations.make(
            routes: "[" + routes() + "]", account: account, environment: environment)
        return try AccountRuntime.make(
            configuration: configuration, stateDirectory: state, environment: environment,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, devIssuerURL: "http://127.0.0.1:1/-",
            logger: ProxyHarness.silentLogger, signInTiming: SignInTiming(sleep: { _ in }))
    }

    /// The thumbprint in the `cnf` claim of a token the fake issued (§6.1).
    static func confirmation(_ token: AccessToken) throws -> String? {
        let claims = try #require(FakeIdentityJWT.split(token.value)?.claims)
        return (claims["cnf"] as? [String: Any])?["jkt"] as? String
    }

    @Test func aClientCredentialsTokenIsBoundToTheKeyKeptBesideTheSignIn() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer { server in
            let runtime = try Self.runtime(
                account: Self.clientCredentials(server, tokenType: "dpop"), state: scratch.state)
            let token = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            let requests = server.requests
            try #require(requests.count == 1)
            let accepted = try #require(requests[0].accepted)
            #expect(accepted.htu == server.tokenEndpoint)
            // The server's thumbprint of the proof's key, the token's cnf.jkt, the token as stored and the file's key.
            #expect(token.boundKey == accepted.thumbprint)
            #expect(try Self.confirmation(token) == accepted.thumbprint)
            let keyFile = try #require(runtime.dpop?.keyFile)
            #expect(keyFile.thumbprint() == accepted.thumbprint)
            #expect(try StoreScratchDirectory.mode(try #require(keyFile.path)) == 0o600)
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func bearerStaysTheDefault() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer { server in
            let runtime = try Self.runtime(
                account: Self.clientCredentials(server, tokenType: nil), state: scratch.state)
            let token = try await runtime.tokens.accessToken(for: Self.scopes)
            #expect(token.boundKey == nil)
            #expect(server.requests.map(\.hadProof) == [false])
            #expect(runtime.dpop == nil)
            #expect(!scratch.entries().contains { $0.hasPrefix("dpop-") })
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test(arguments: [(["ES256"], true), (["RS256", "PS256"], false), ([], false)])
    func autoFollowsTheServersMetadata(algorithms: [String], bound: Bool) async throws {
        try await withDPoPAuthorizationServer(algorithms: algorithms) { server in
            let runtime = try Self.runtime(account: Self.clientCredentials(server, tokenType: "auto"), state: nil)
            let token = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            #expect((token.boundKey != nil) == bound)
            #expect(server.requests.map(\.hadProof) == [bound])
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func theRefreshTokenFlowRedeemsWithProofsAndTheRotatedRefreshTokenIsBound() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer { server in
            let environment = [Self.refreshVariable: server.issueRefreshToken(boundTo: nil)]
            let runtime = try Self.runtime(
                account: Self.refreshToken(server), state: scratch.state, environment: environment)
            let first = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            let second = try await runtime.tokens.accessToken(for: Self.otherScopes, acceptingBound: true)
            let thumbprints = server.requests.map { $0.accepted?.thumbprint }
            #expect(server.requests.map(\.status) == [200, 200])
            #expect(Set(thumbprints).count == 1)
            #expect(first.boundKey == thumbprints[0])
            #expect(second.boundKey == thumbprints[0])
            let refreshToken = try #require(runtime.session.refreshToken)
            #expect(server.binding(ofRefreshToken: refreshToken) == .some(thumbprints[0]))
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func theDeviceCodeSignInPollsWithProofsSoItsRefreshTokenIsBound() async throws {
        try await withDPoPAuthorizationServer { server in
            let account =
                #"{ "flow": "device-code", "issuer": "\#(server.issuer)", "clientId": "cli", "tokenType": "dpop" }"#
            let runtime = try Self.runtime(account: account, state: nil)
            _ = try await runtime.signInWithinLimit(console: ScriptedConsole())
            let token = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            let requests = server.requests
            #expect(requests.map(\.grant) == ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"])
            #expect(requests.allSatisfy { $0.status == 200 && $0.accepted?.thumbprint == token.boundKey })
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func aNonceChallengeIsMetOnceAndTheNonceKeptForTheNextRequest() async throws {
        try await withDPoPAuthorizationServer(nonce: .required) { server in
            let runtime = try Self.runtime(account: Self.clientCredentials(server, tokenType: "dpop"), state: nil)
            _ = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            #expect(server.requests.map(\.status) == [400, 200])
            #expect(server.requests.map(\.error) == ["use_dpop_nonce", nil])
            #expect(server.requests[1].accepted?.nonce == server.currentNonce)
            // The nonce the last answer carried serves the next request at once.
            _ = try await runtime.tokens.accessToken(for: Self.otherScopes, acceptingBound: true)
            #expect(server.requests.map(\.status) == [400, 200, 200])
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func anOldNonceIsReplacedOnce() async throws {
        try await withDPoPAuthorizationServer(nonce: .required) { server in
            let runtime = try Self.runtime(account: Self.clientCredentials(server, tokenType: "dpop"), state: nil)
            _ = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            server.rotateNonce()
            _ = try await runtime.tokens.accessToken(for: Self.otherScopes, acceptingBound: true)
            #expect(server.requests.map(\.status) == [400, 200, 400, 200])
            #expect(server.requests[2].description == "the nonce is not the current one")
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func aServerThatAsksForANewNonceEveryTimeIsNotLoopedOn() async throws {
        try await withDPoPAuthorizationServer(nonce: .rotateEveryRequest) { server in
            let runtime = try Self.runtime(account: Self.clientCredentials(server, tokenType: "dpop"), state: nil)
            let error = await #expect(throws: TokenError.self) {
                try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            }
            #expect(server.requests.count == 2)
            #expect(error?.reason.contains("refused the DPoP nonce it had just given; not asking a third time") == true)
            try await runtime.shutdownWithinLimit()
        }
    }

    @Test func aBoundTokenIsNeverHandedToTheBearerPath() async throws {
        try await withDPoPAuthorizationServer { server in
            let runtime = try Self.runtime(account: Self.clientCredentials(server, tokenType: "dpop"), state: nil)
            await #expect(throws: TokenCache.boundTokenRefusal) {
                try await runtime.tokens.accessToken(for: Self.scopes)
            }
            #expect(runtime.tokens.cachedToken(for: Self.scopes) == nil)
            let reuse = runtime.tokens.cachedToken(forReuse: Self.scopes)
            #expect(reuse.token == nil && reuse.reusable == nil)
            // Refused again from the cache, without another token request.
            await #expect(throws: TokenCache.boundTokenRefusal) {
                try await runtime.tokens.accessToken(for: Self.scopes)
            }
            #expect(server.requests.count == 1)
            #expect(try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true).boundKey != nil)
            try await runtime.shutdownWithinLimit()
        }
    }

    /// SPEC §7: every process of the machine uses the same key, so the refresh token one rotated works in another.
    @Test func twoProcessesShareOneKeyAndOneRefreshToken() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer { server in
            let environment = [Self.refreshVariable: server.issueRefreshToken(boundTo: nil)]
            let one = try Self.runtime(
                account: Self.refreshToken(server), state: scratch.state, environment: environment)
            let two = try Self.runtime(
                account: Self.refreshToken(server), state: scratch.state, environment: environment)
            let first = try await one.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            one.persistence?.flush()
            // The second process redeems the refresh token the first one rotated (its own is retired): only a proof
            // by the same key makes the server accept it.
            let second = try await two.tokens.accessToken(for: Self.otherScopes, acceptingBound: true)
            #expect(server.requests.map(\.status) == [200, 200])
            #expect(first.boundKey != nil)
            #expect(second.boundKey == first.boundKey)
            let held = try #require(two.session.refreshToken)
            #expect(server.binding(ofRefreshToken: held) == .some(first.boundKey))
            try await one.shutdownWithinLimit()
            try await two.shutdownWithinLimit()
        }
    }

    @Test func logoutDeletesTheKeySoTheNextSignInHasANewOne() async throws {
        let scratch = try StoreScratchDirectory()
        defer { scratch.remove() }
        try await withDPoPAuthorizationServer { server in
            let environment = [Self.refreshVariable: server.issueRefreshToken(boundTo: nil)]
            let runtime = try Self.runtime(
                account: Self.refreshToken(server), state: scratch.state, environment: environment)
            let token = try await runtime.tokens.accessToken(for: Self.scopes, acceptingBound: true)
            let keyFile = try #require(runtime.dpop?.keyFile)
            #expect(keyFile.thumbprint() == token.boundKey)
            _ = await runtime.signOut()
            #expect(keyFile.thumbprint() == nil)
            #expect(!scratch.entries().contains { $0.hasPrefix("dpop-") })
            #expect(try keyFile.key().thumbprint != token.boundKey)
            try await runtime.shutdownWithinLimit()
        }
    }

    /// RFC 9449 §10: the browser flow's authorization request names the key, so the code is bound to it.
    @Test func theBrowserFlowsAuthorizationRequestNamesTheKey() async throws {
        let provider = IdentityProviderClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger)
        let account = BrowserAccount(client: OAuthClient(endpoint: .issuer("https://as"), clientId: "cli"))
        let signIn = BrowserSignIn(
            account: account, provider: provider, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            timeout: .seconds(1))
        let key = DPoPKey()
        for thumbprint in [key.thumbprint, nil] {
            let url = signIn.authorizationURL(
                "https://as/authorize", redirectURI: "http://127.0.0.1:1/", scopeSets: [Self.scopes],
                proofKey: ProofKey(), state: "s", nonce: "n", dpopThumbprint: thumbprint)
            let query = try #require(URLComponents(string: url)?.queryItems)
            #expect(query.first { $0.name == "dpop_jkt" }?.value == thumbprint)
        }
        try await provider.shutdown()
    }
}
