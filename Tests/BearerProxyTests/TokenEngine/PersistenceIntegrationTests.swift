import Foundation
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

@Suite("Token cache file: a running proxy, another process, and secrets in output")
struct PersistenceIntegrationTests {
    static func temporaryState() -> StateDirectory {
        StateDirectory(path: NSTemporaryDirectory() + "bearer-proxy-state-\(UUID().uuidString)/bearer-proxy")
    }

    @Test("the rotated refresh token and the tokens are written to the file, and a restart uses them")
    func restartUsesTheFile() async throws {
        let state = Self.temporaryState()
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes = "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]"
                let environment = TestAccounts.environment(provider)
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(provider), environment: environment,
                    stateDirectory: state
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .ok)
                }
                // The environment's refresh token has been rotated out; the file's one must be used, and the
                // cached access token is reused without asking the provider at all.
                provider.setSupersededRefreshTokens(.invalid)
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(provider), environment: environment,
                    stateDirectory: state
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .ok)
                    #expect(provider.tokenRequestCount == 1)
                    #expect(proxy.proxy.account.session.identity?.name == FakeIdentityProvider.User.alice.name)
                }
                let files = try FileManager.default.contentsOfDirectory(atPath: state.path)
                let tokenFile = try #require(files.first { $0.hasPrefix("tokens-") })
                let attributes = try FileManager.default.attributesOfItem(atPath: state.path + "/" + tokenFile)
                #expect(attributes[.posixPermissions] as? Int == 0o600)
            }
        }
    }

    @Test(
        "a token cache file corrupted under a running proxy is set aside, not read as a sign-out; memory's is written")
    func corruptFileIsNoSignOut() async throws {
        let state = Self.temporaryState()
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes = "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]"
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(provider),
                    environment: TestAccounts.environment(provider), stateDirectory: state
                ) { proxy in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/api/x").status == .ok)
                    let account = proxy.proxy.account
                    let persistence = try #require(account.persistence)
                    persistence.flush()
                    // Truncated, as by a writer that is not bearer-proxy, or a disk that lost the tail.
                    try Data("{\n  \"version\" : 1,\n  \"accessTo".utf8).write(
                        to: URL(fileURLWithPath: persistence.store.path))
                    await TokenMaintenance(account: account).tick()
                    persistence.flush()
                    #expect(account.session.isSignedIn, "a corrupt file signed the running proxy out")
                    guard case .loaded(let written) = try persistence.store.load() else {
                        Issue.record("the sign-in was not written to a fresh file")
                        return
                    }
                    #expect(written.refreshToken != nil)
                    let setAside = try FileManager.default.contentsOfDirectory(atPath: persistence.store.directory.path)
                        .filter { $0.contains(".corrupt-") }
                    #expect(setAside.count == 1, "the corrupt file was not kept aside")
                    #expect(try await TestClient.send(port: proxy.port, uri: "/api/y").status == .ok)
                }
            }
        }
    }

    @Test("dev tokens are kept per issuer: a proxy on another port does not reuse a token with the old iss")
    func devTokensPerIssuer() async throws {
        let state = Self.temporaryState()
        let scopes = ScopeSet(["api://a/Read"])
        let routes = #"[ { "prefix": "/api", "upstream": "http://127.0.0.1:9", "scopes": ["api://a/Read"] } ]"#
        let first = try await ProxyHarness.with(routes: routes, stateDirectory: state) { proxy in
            let token = try await proxy.proxy.tokens.accessTokenWithinLimit(for: scopes)
            proxy.proxy.account.persistence?.flush()
            return token.value
        }
        try await ProxyHarness.with(routes: routes, stateDirectory: state) { proxy in
            let token = try await proxy.proxy.tokens.accessTokenWithinLimit(for: scopes)
            #expect(token.value != first)
            let claims = try jwtClaims("Bearer " + token.value)
            #expect(claims["iss"] as? String == "http://127.0.0.1:\(proxy.port)/-")
        }
    }

    @Test("a logout in another process is picked up by the running proxy")
    func logoutElsewhereIsNoticed() async throws {
        let state = Self.temporaryState()
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes = "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]"
                let account = TestAccounts.refreshToken(provider)
                let environment = TestAccounts.environment(provider)
                try await ProxyHarness.with(
                    routes: routes, account: account, environment: environment, stateDirectory: state
                ) { proxy in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/api/x").status == .ok)
                    proxy.proxy.account.persistence?.flush()
                    // Another process: the CLI's logout, on the same state directory.
                    let directory = try #require(
                        try FileManager.default.contentsOfDirectory(atPath: state.path).first {
                            $0.hasPrefix("tokens-")
                        })
                    #expect(!directory.isEmpty)
                    let configuration = try TestConfigurations.make(
                        routes: routes, account: account, environment: environment)
                    let other = try AccountRuntime.make(
                        configuration: configuration, stateDirectory: state, environment: environment,
                        eventLoopGroup: proxy.proxy.group, devIssuerURL: "http://127.0.0.1:1/-",
                        logger: ProxyHarness.silentLogger)
                    other.session.signOut()
                    other.tokens.replaceTokens(with: [], because: .signedOut)
                    try await other.shutdownWithinLimit()
                    // One maintenance round, as `serve` runs every second.
                    await TokenMaintenance(account: proxy.proxy.account).tick()
                    #expect(!proxy.proxy.account.session.isSignedIn)
                    let after = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(after.status == .unauthorized)
                    #expect(upstream.requests.count == 1)
                }
            }
        }
    }

    @Test("a whole session at trace level: no token, refresh token, secret or assertion in any log line")
    func noSecretsInLogs() async throws {
        let store = CapturingLogHandler.Store()
        var secrets: [String] = [FakeIdentityProvider.Client.confidentialClientSecret]
        try await withIdentityProvider { provider in
            provider.setRefreshIn(0)
            try await withUpstream({ head in
                head.uri.hasSuffix("/reject")
                    ? .respond(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]) : .echo
            }) { upstream in
                let environment = TestAccounts.environment(provider)
                secrets.append(environment[TestAccounts.refreshTokenVariable]!)
                for account in [
                    TestAccounts.refreshToken(provider), TestAccounts.clientSecret(provider),
                    TestAccounts.certificate(provider, algorithm: "PS256", pair: CertificateFixtures.client),
                ] {
                    let scopes = account.contains("refresh-token") ? ["api://todo/Read"] : ["api://todo/.default"]
                    try await ProxyHarness.with(
                        routes: "[" + route(to: upstream, scopes: scopes) + "]", account: account,
                        environment: environment, stateDirectory: Self.temporaryState(),
                        logger: CapturingLogHandler.logger(into: store)
                    ) { proxy in
                        _ = try await TestClient.send(port: proxy.port, uri: "/api/x")
                        _ = try await TestClient.send(port: proxy.port, uri: "/api/reject")
                        await TokenMaintenance(account: proxy.proxy.account).tick()
                        secrets += proxy.proxy.tokens.allTokens.map(\.value)
                        if let refreshToken = proxy.proxy.account.session.snapshot.refreshToken {
                            secrets.append(refreshToken)
                        }
                    }
                }
                secrets += upstream.requests.compactMap {
                    $0.head.header("authorization").map { String($0.dropFirst(7)) }
                }
                if let assertion = provider.lastAssertion {
                    secrets.append(String(decoding: assertion.claimsJSON, as: UTF8.self))
                }
            }
        }
        let logs = store.all.joined(separator: "\n")
        #expect(!store.all.isEmpty)
        #expect(secrets.count > 6)
        for (index, secret) in Set(secrets).enumerated() where secret.count >= 8 {
            let leaked = logs.contains(secret)
            #expect(!leaked, "secret #\(index) appeared in the logs")
        }
        let jwtShaped = logs.contains("eyJ")
        #expect(!jwtShaped, "something token-shaped appeared in the logs")
    }
}
