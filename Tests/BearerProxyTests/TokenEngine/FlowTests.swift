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

@Suite("Flows against the fake identity provider")
struct FlowTests {
    /// Makes a proxy with `account` in front of an echo upstream, sends one request to `/api/x` and returns the
    /// token claims the upstream received.
    static func claimsAtUpstream(
        account: String, environment: [String: String], scopes: [String] = ["https://graph.microsoft.com/.default"]
    ) async throws -> [String: Any] {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: "[" + route(to: upstream, scopes: scopes) + "]", account: account, environment: environment
            ) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                #expect(response.status == .ok, "\(response.bodyText)")
                let token = try #require(try response.echo().header("authorization")?.dropFirst(7))
                return try #require(FakeIdentityProvider.claims(ofAccessToken: String(token)))
            }
        }
    }

    @Test("client credentials with a secret, in the form body and as HTTP Basic", arguments: ["post", "basic"])
    func clientSecret(method: String) async throws {
        try await withIdentityProvider { provider in
            let claims = try await Self.claimsAtUpstream(
                account: TestAccounts.clientSecret(provider, method: method),
                environment: TestAccounts.environment(provider))
            #expect(claims["aud"] as? String == "https://graph.microsoft.com")
            #expect(claims["idtyp"] as? String == "app")
            let request = try #require(provider.tokenRequests.last)
            #expect(request.grantType == "client_credentials")
            #expect(request.authMethod == (method == "post" ? .post : .basic))
        }
    }

    @Test("client credentials through an OIDC issuer's discovery document")
    func clientSecretViaDiscovery() async throws {
        try await withIdentityProvider { provider in
            _ = try await Self.claimsAtUpstream(
                account: TestAccounts.clientSecret(provider, issuer: true),
                environment: TestAccounts.environment(provider))
            #expect(provider.discoveryRequestCount == 1)
            #expect(provider.tokenRequests.last?.path.hasSuffix("/oidc/token") == true)
        }
    }

    @Test(
        "client credentials with a certificate: the fake verifies signature, thumbprint, aud, iss/sub, jti, exp",
        arguments: ["PS256", "RS256"])
    func certificateAssertion(algorithm: String) async throws {
        try await withIdentityProvider { provider in
            _ = try await Self.claimsAtUpstream(
                account: TestAccounts.certificate(provider, algorithm: algorithm, pair: CertificateFixtures.client),
                environment: [:])
            let request = try #require(provider.tokenRequests.last)
            #expect(request.authMethod == .assertion(alg: algorithm))
            #expect(request.assertionFailure == nil)
            let assertion = try #require(provider.lastAssertion)
            if algorithm == "PS256" {
                #expect(assertion.header["x5t#S256"] as? String == CertificateFixtures.client.sha256Thumbprint)
            } else {
                #expect(assertion.header["x5t"] as? String == CertificateFixtures.client.sha1Thumbprint)
            }
            #expect(assertion.claims["aud"] as? String == provider.tokenEndpoint)
            #expect(assertion.claims["iss"] as? String == FakeIdentityProvider.Client.confidentialClientID)
            #expect(assertion.claims["sub"] as? String == FakeIdentityProvider.Client.confidentialClientID)
            let issuedAt = try #require(assertion.claims["iat"] as? Int)
            let expiry = try #require(assertion.claims["exp"] as? Int)
            #expect(expiry - issuedAt == 600)
            #expect((assertion.claims["jti"] as? String)?.isEmpty == false)
        }
    }

    @Test("a certificate the provider does not know is refused: 500 problem naming the error, upstream untouched")
    func wrongCertificate() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["https://graph.microsoft.com/.default"]) + "]",
                    account: TestAccounts.certificate(provider, algorithm: "PS256", pair: CertificateFixtures.other),
                    environment: [:]
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .internalServerError)
                    let detail = try response.jsonObject()["detail"] as? String
                    #expect(detail?.contains("invalid_client") == true)
                    #expect(upstream.requests.isEmpty)
                    #expect(provider.tokenRequests.last?.assertionFailure != nil)
                }
            }
        }
    }

    @Test("refresh token: one resource per request plus openid profile offline_access; the rotated token is used next")
    func refreshTokenRotation() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let routes =
                    "[" + route("/graph", to: upstream, scopes: ["User.Read"]) + ", "
                    + route("/todo", to: upstream, scopes: ["api://todo/ToDoList.Read"]) + "]"
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(provider),
                    environment: TestAccounts.environment(provider)
                ) { proxy in
                    #expect(try await TestClient.send(port: proxy.port, uri: "/graph/me").status == .ok)
                    #expect(try await TestClient.send(port: proxy.port, uri: "/todo/x").status == .ok)
                    let requests = provider.tokenRequests
                    #expect(requests.count == 2)
                    for request in requests {
                        #expect(request.grantType == "refresh_token")
                        #expect(Set(["openid", "profile", "offline_access"]).isSubset(of: Set(request.scopes)))
                        #expect(request.clientInfoRequested)
                    }
                    // The second request used the refresh token the first one rotated in.
                    #expect(requests[1].refreshTokenID == requests[0].issuedRefreshTokenID)
                    let identity = try #require(proxy.proxy.account.session.identity)
                    #expect(identity.name == FakeIdentityProvider.User.alice.name)
                    #expect(identity.objectID == FakeIdentityProvider.User.alice.oid)
                }
            }
        }
    }

    @Test("command: {resource} is substituted; JSON stdout gives the token and its expiry")
    func commandFlow() async throws {
        let script = #"printf '{"accessToken":"cmd-token-for-%s","expires_on":%s}' "$1" "$(($(date +%s)+3600))""#
        let argv = try JSONSerialization.data(withJSONObject: ["sh", "-c", script, "sh", "{resource}"])
        let account = #"{ "flow": "command", "command": \#(String(decoding: argv, as: UTF8.self)) }"#
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]", account: account
            ) { proxy in
                let echo = try await TestClient.send(port: proxy.port, uri: "/api/x").echo()
                #expect(echo.header("authorization") == "Bearer cmd-token-for-api://todo")
                let token = try #require(proxy.proxy.tokens.cachedToken(for: ScopeSet(["api://todo/Read"])))
                #expect(token.expiresOn.timeIntervalSinceNow > 3000)
            }
        }
    }

    @Test("command: a failing program answers 401 with its first stderr line; the upstream is not contacted")
    func commandFailure() async throws {
        let account = #"{ "flow": "command", "command": ["sh", "-c", "echo 'Please run az login' >&2; exit 1"] }"#
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]", account: account
            ) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                #expect(response.status == .unauthorized)
                #expect((try response.jsonObject()["detail"] as? String)?.contains("Please run az login") == true)
                #expect(upstream.requests.isEmpty)
            }
        }
    }

    @Test("command output parsing: raw tokens, access_token JSON, expires_in")
    func commandParsing() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(CommandFlow.parse("abc\n", now: now)?.token == "abc")
        #expect(CommandFlow.parse("abc\n", now: now)?.expiresOn == now + CommandFlow.assumedLifetime)
        let json = CommandFlow.parse(#"{"access_token":"t","expires_in":"120"}"#, now: now)
        #expect(json?.token == "t")
        #expect(json?.expiresOn == now + 120)
        #expect(CommandFlow.parse("", now: now) == nil)
        #expect(CommandFlow.parse("two words", now: now) == nil)
        #expect(CommandFlow.parse(#"{"nothing":1}"#, now: now) == nil)
        // Numbers as JSON numbers, integral or not; epoch seconds in `expires_on`.
        #expect(CommandFlow.parse(#"{"access_token":"t","expires_in":90.5}"#, now: now)?.expiresOn == now + 90.5)
        #expect(
            CommandFlow.parse(#"{"accessToken":"t","expires_on":1800003600}"#, now: now)?.expiresOn
                == Date(timeIntervalSince1970: 1_800_003_600))
    }

    @Test("command output parsing: az's expiresOn, as ISO 8601 or as local time with microseconds")
    func commandExpiresOn() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let iso = CommandFlow.parse(#"{"accessToken":"t","expiresOn":"2027-01-15T08:00:00Z"}"#, now: now)
        #expect(iso?.expiresOn == ISO8601DateFormatter().date(from: "2027-01-15T08:00:00Z"))
        // Local time: the zone is the machine's, so compare two readings rather than pin an instant.
        let later = try #require(CommandFlow.localTime("2026-11-22 07:00:00.250000"))
        let earlier = try #require(CommandFlow.localTime("2026-11-22 06:00:00"))
        #expect(later.timeIntervalSince(earlier) == 3600.25)
        if TimeZone.current.secondsFromGMT(for: earlier) == 0 {
            #expect(earlier == ISO8601DateFormatter().date(from: "2026-11-22T06:00:00Z"))
        }
        let viaJSON = CommandFlow.parse(#"{"accessToken":"t","expiresOn":"2026-11-22 07:00:00.250000"}"#, now: now)
        #expect(viaJSON?.expiresOn == later)
        for malformed in [
            "2026-11-22", "2026-13-01 00:00:00", "2026-11-22 25:00:00", "2026-11-22 07:00:00.", "a-b-c d:e:f",
        ] {
            #expect(CommandFlow.localTime(malformed) == nil, "\(malformed)")
        }
    }

    @Test("static: the token from the environment is sent as is")
    func staticFlow() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: #"[ { "prefix": "/api", "upstream": "\#(upstream.baseURL)" } ]"#,
                account: #"{ "flow": "static", "tokenEnv": "PAT" }"#, environment: ["PAT": "ghp_static_token"]
            ) { proxy in
                let echo = try await TestClient.send(port: proxy.port, uri: "/api/x").echo()
                #expect(echo.header("authorization") == "Bearer ghp_static_token")
            }
        }
    }
}
