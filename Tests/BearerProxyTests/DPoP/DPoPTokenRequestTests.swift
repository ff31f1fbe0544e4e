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

    /// The account a test signs in with.
    enum Account {
        case clientCredentials(tokenType: String?)
        /// The refresh-token flow, with a bearer refresh token the fake issued, `tokenType` `dpop`.
        case refreshToken
        case deviceCode

        func json(_ server: FakeDPoPAuthorizationServer) -> String {
            switch self {
            case .clientCredentials(let tokenType):
                #"{ "flow": "client-credentials", "issuer": "\#(server.issuer)", "clientId": "orders-daemon", "#
                    + #""clientSecretEnv": "\#(secretVariable)""#
                    + (tokenType.map { #", "tokenType": "\#($0)""# } ?? "") + " }"
            case .refreshToken:
                #"{ "flow": "refresh-token", "issuer": "\#(server.issuer)", "clientId": "cli", "#
                    + #""refreshTokenEnv": "\#(refreshVariable)", "tokenType": "dpop" }"#
            case .deviceCode:
                #"{ "flow": "device-code", "issuer": "\#(server.issuer)", "clientId": "cli", "tokenType": "dpop" }"#
            }
        }
    }

    /// What a test runs against: the fake, one process's account and the state directory they share.
    struct Setup {
        var server: FakeDPoPAuthorizationServer
        var runtime: AccountRuntime
        /// Nil: `--no-persist`.
        var scratch: StoreScratchDirectory?
        /// Another process's account on the same state directory and environment.
        var another: () throws -> AccountRuntime
    }

    /// Runs `body` with a fake authorization server and `account` on it (on a fresh state directory when
    /// `persisted`), shutting down the account and removing the directory afterwards.
    static func withAccount(
        _ account: Account, persisted: Bool = false, algorithms: [String] = ["ES256"],
        nonce: FakeDPoPAuthorizationServer.NonceRule = .never, _ body: (Setup) async throws -> Void
    ) async throws {
        let scratch = persisted ? try StoreScratchDirectory() : nil
        defer { scratch?.remove() }
        try await withDPoPAuthorizationServer(algorithms: algorithms, nonce: nonce) { server in
            var environment = [secretVariable: "s3cret"]
            if case .refreshToken = account {
                environment[refreshVariable] = server.issueRefreshToken(boundTo: nil)
            }
            let make = {
                try Self.runtime(account: account.json(server), state: scratch?.state, environment: environment)
            }
            let runtime = try make()
            do {
                try await body(Setup(server: server, runtime: runtime, scratch: scratch, another: make))
            } catch {
                try? await runtime.shutdownWithinLimit()
                throw error
            }
            try await runtime.shutdownWithinLimit()
        }
    }

    /// The account of `account` on `state` (nil: `--no-persist`).
    static func runtime(account: String, state: StateDirectory?, environment: [String: String]) throws
        -> AccountRuntime
    {
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
        try await Self.withAccount(.clientCredentials(tokenType: "dpop"), persisted: true) { setup in
            let token = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            let requests = setup.server.requests
            try #require(requests.count == 1)
            let accepted = try #require(requests[0].accepted)
            #expect(accepted.htu == setup.server.tokenEndpoint)
            // The server's thumbprint of the proof's key, the token's cnf.jkt, the token as stored and the file's key.
            #expect(token.boundKey == accepted.thumbprint)
            #expect(try Self.confirmation(token) == accepted.thumbprint)
            let keyFile = try #require(setup.runtime.dpop?.keyFile)
            #expect(keyFile.thumbprint() == accepted.thumbprint)
            #expect(try StoreScratchDirectory.mode(try #require(keyFile.path)) == 0o600)
        }
    }

    @Test func bearerStaysTheDefault() async throws {
        try await Self.withAccount(.clientCredentials(tokenType: nil), persisted: true) { setup in
            let token = try await setup.runtime.tokens.accessToken(for: Self.scopes)
            #expect(token.boundKey == nil)
            #expect(setup.server.requests.map(\.hadProof) == [false])
            #expect(setup.runtime.dpop == nil)
            #expect(try #require(setup.scratch).entries().contains { $0.hasPrefix("dpop-") } == false)
        }
    }

    @Test(arguments: [(["ES256"], true), (["RS256", "PS256"], false), ([], false)])
    func autoFollowsTheServersMetadata(algorithms: [String], bound: Bool) async throws {
        try await Self.withAccount(.clientCredentials(tokenType: "auto"), algorithms: algorithms) { setup in
            let token = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            #expect((token.boundKey != nil) == bound)
            #expect(setup.server.requests.map(\.hadProof) == [bound])
        }
    }

    @Test func theRefreshTokenFlowRedeemsWithProofsAndTheRotatedRefreshTokenIsBound() async throws {
        try await Self.withAccount(.refreshToken, persisted: true) { setup in
            let first = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            let second = try await setup.runtime.tokens.accessToken(for: Self.otherScopes, presentedAs: .auto)
            let thumbprints = setup.server.requests.map { $0.accepted?.thumbprint }
            #expect(setup.server.requests.map(\.status) == [200, 200])
            #expect(Set(thumbprints).count == 1)
            #expect(first.boundKey == thumbprints[0])
            #expect(second.boundKey == thumbprints[0])
            let refreshToken = try #require(setup.runtime.session.refreshToken)
            #expect(setup.server.binding(ofRefreshToken: refreshToken) == .some(thumbprints[0]))
        }
    }

    @Test func theDeviceCodeSignInPollsWithProofsSoItsRefreshTokenIsBound() async throws {
        try await Self.withAccount(.deviceCode) { setup in
            _ = try await setup.runtime.signInWithinLimit(console: ScriptedConsole())
            let token = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            let requests = setup.server.requests
            #expect(requests.map(\.grant) == ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"])
            #expect(requests.allSatisfy { $0.status == 200 && $0.accepted?.thumbprint == token.boundKey })
        }
    }

    @Test func aNonceChallengeIsMetOnceAndTheNonceKeptForTheNextRequest() async throws {
        try await Self.withAccount(.clientCredentials(tokenType: "dpop"), nonce: .required) { setup in
            let server = setup.server
            _ = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            #expect(server.requests.map(\.status) == [400, 200])
            #expect(server.requests.map(\.error) == ["use_dpop_nonce", nil])
            #expect(server.requests[1].accepted?.nonce == server.currentNonce)
            // The nonce the last answer carried serves the next request at once.
            _ = try await setup.runtime.tokens.accessToken(for: Self.otherScopes, presentedAs: .auto)
            #expect(server.requests.map(\.status) == [400, 200, 200])
        }
    }

    @Test func anOldNonceIsReplacedOnce() async throws {
        try await Self.withAccount(.clientCredentials(tokenType: "dpop"), nonce: .required) { setup in
            _ = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            setup.server.rotateNonce()
            _ = try await setup.runtime.tokens.accessToken(for: Self.otherScopes, presentedAs: .auto)
            #expect(setup.server.requests.map(\.status) == [400, 200, 400, 200])
            #expect(setup.server.requests[2].description == "the nonce is not the current one")
        }
    }

    @Test func aServerThatAsksForANewNonceEveryTimeIsNotLoopedOn() async throws {
        try await Self.withAccount(.clientCredentials(tokenType: "dpop"), nonce: .rotateEveryRequest) { setup in
            let error = await #expect(throws: TokenError.self) {
                try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            }
            #expect(setup.server.requests.count == 2)
            #expect(error?.reason.contains("refused the DPoP nonce it had just given; not asking a third time") == true)
        }
    }

    @Test func aBoundTokenIsNeverHandedToTheBearerPath() async throws {
        try await Self.withAccount(.clientCredentials(tokenType: "dpop")) { setup in
            let tokens = setup.runtime.tokens
            await #expect(throws: TokenCache.boundTokenRefusal) {
                try await tokens.accessToken(for: Self.scopes)
            }
            #expect(tokens.cachedToken(for: Self.scopes) == nil)
            let reuse = tokens.cachedToken(forReuse: Self.scopes)
            #expect(reuse.token == nil && reuse.reusable == nil)
            // Refused again from the cache, without another token request.
            await #expect(throws: TokenCache.boundTokenRefusal) {
                try await tokens.accessToken(for: Self.scopes)
            }
            #expect(setup.server.requests.count == 1)
            let bound = try await tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            #expect(bound.boundKey != nil)
        }
    }

    /// SPEC §7: every process of the machine uses the same key, so the refresh token one rotated works in another.
    @Test func twoProcessesShareOneKeyAndOneRefreshToken() async throws {
        try await Self.withAccount(.refreshToken, persisted: true) { setup in
            let one = setup.runtime
            let two = try setup.another()
            let first = try await one.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            one.persistence?.flush()
            // The second process redeems the refresh token the first one rotated (its own is retired): only a proof
            // by the same key makes the server accept it.
            let second = try await two.tokens.accessToken(for: Self.otherScopes, presentedAs: .auto)
            #expect(setup.server.requests.map(\.status) == [200, 200])
            #expect(first.boundKey != nil)
            #expect(second.boundKey == first.boundKey)
            let held = try #require(two.session.refreshToken)
            #expect(setup.server.binding(ofRefreshToken: held) == .some(first.boundKey))
            try await two.shutdownWithinLimit()
        }
    }

    @Test func logoutDeletesTheKeySoTheNextSignInHasANewOne() async throws {
        try await Self.withAccount(.refreshToken, persisted: true) { setup in
            let token = try await setup.runtime.tokens.accessToken(for: Self.scopes, presentedAs: .auto)
            let keyFile = try #require(setup.runtime.dpop?.keyFile)
            #expect(keyFile.thumbprint() == token.boundKey)
            _ = await setup.runtime.signOut()
            #expect(keyFile.thumbprint() == nil)
            #expect(try #require(setup.scratch).entries().contains { $0.hasPrefix("dpop-") } == false)
            #expect(try keyFile.key().thumbprint != token.boundKey)
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
