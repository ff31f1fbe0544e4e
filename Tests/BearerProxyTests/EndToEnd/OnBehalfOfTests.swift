import Foundation
import NIOHTTP1
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

/// `"auth": "on-behalf-of"`: the caller's own bearer token is exchanged at the fake provider — Entra's on-behalf-of
/// flow and RFC 8693 token exchange, both checked there as the real services check them (a confidential client, the
/// subject signed, unexpired, for this client, a user's) — and the exchanged token goes upstream; the caller's never.
@Suite("End to end: on behalf of the caller")
struct OnBehalfOfTests {
    static let downstream = "api://downstream"

    /// A proxy whose account is the fake's confidential client (secret in the form) and whose routes are `routes`
    /// (built for the upstream), with an upstream that answers each request by `behaviour`.
    static func withProxy<T>(
        routes: @escaping (FakeUpstream) -> String,
        upstream behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour = { _ in .echo },
        environment extra: [String: String] = [:],
        _ body: (FakeIdentityProvider, ProxyHarness, FakeUpstream) async throws -> T
    ) async throws -> T {
        try await withIdentityProvider { provider in
            try await withUpstream(behaviour) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + routes(upstream) + "]", account: TestAccounts.clientSecret(provider),
                    environment: TestAccounts.environment(provider).merging(extra) { $1 }
                ) { proxy in try await body(provider, proxy, upstream) }
            }
        }
    }

    static func oboRoute(_ upstream: FakeUpstream, prefix: String = "/obo", extra: String = "") -> String {
        #"{ "prefix": "\#(prefix)", "upstream": "\#(upstream.baseURL)", "auth": "on-behalf-of", "#
            + #""scopes": ["\#(downstream)/.default"]\#(extra) }"#
    }

    static func send(_ proxy: ProxyHarness, _ uri: String = "/obo/x", caller: String?) async throws -> TestResponse {
        try await TestClient.send(
            port: proxy.port, uri: uri, headers: caller.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    static func problemType(_ response: TestResponse) throws -> String? {
        #expect(response.header("content-type") == "application/problem+json")
        return try response.jsonObject()["type"] as? String
    }

    @Test("jwt-bearer: the upstream gets a token for the caller's user from the exchange; the caller's is never sent")
    func onBehalfOfExchange() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            let response = try await Self.send(proxy, caller: alice)
            #expect(response.status == .ok, "\(response.bodyText)")
            let sent = try #require(upstream.requests.last?.head)
            let authorization = try #require(sent.header("authorization"))
            #expect(authorization != "Bearer \(alice)")
            #expect(!sent.headerList.contains { $0.value.contains(alice) })
            let claims = try jwtClaims(authorization)
            #expect(claims["sub"] as? String == "alice-sub")
            #expect(claims["aud"] as? String == Self.downstream)
            #expect(claims["azp"] as? String == FakeIdentityProvider.Client.confidentialClientID)
            let request = try #require(provider.tokenRequests.last)
            #expect(request.grantType == OnBehalfOfFlow.jwtBearerGrant)
            #expect(request.parameters["requested_token_use"] == "on_behalf_of")
            #expect(request.parameters["assertion"] == alice)
            #expect(request.scope == "\(Self.downstream)/.default")
            #expect(request.authMethod == .post)
            #expect(request.outcome == .issued)
        }
    }

    @Test("each caller has their own token: a second request reuses it, another caller gets an exchange of their own")
    func perCallerCache() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            let bob = FakeIdentityProvider.callerToken(sub: "bob-sub")
            for caller in [alice, alice, bob, alice, bob] {
                #expect(try await Self.send(proxy, caller: caller).status == .ok)
            }
            #expect(provider.tokenRequestCount == 2)
            let subjects = try upstream.requests.map {
                try jwtClaims($0.head.header("authorization"))["sub"] as? String
            }
            #expect(subjects == ["alice-sub", "alice-sub", "bob-sub", "alice-sub", "bob-sub"])
            // `/-/status` counts the callers kept, and shows nothing of their tokens.
            let status = try await TestClient.send(port: proxy.port, uri: "/-/status")
            let routes = try #require(try status.jsonObject()["routes"] as? [[String: Any]])
            #expect((routes.first?["onBehalfOf"] as? [String: Any])?["callersKept"] as? Int == 2)
            #expect(routes.first?["token"] == nil)
            #expect(!status.bodyText.contains(alice) && !status.bodyText.contains(bob))
        }
    }

    /// The callers' tokens belong to the account and the route that exchanged them (SPEC §10): a reload that keeps
    /// both keeps them, and one that changes either starts without them — a new account never sends a token its
    /// predecessor got.
    @Test("a reload keeps the callers' tokens when the account and the route stay, and drops them when either changes")
    func reloadKeepsOrDropsCallers() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            let file = NSTemporaryDirectory() + "obo-reload-\(UUID().uuidString).json"
            defer { try? FileManager.default.removeItem(atPath: file) }
            func reload(account: String, route: String = "") async throws -> RunningProxy.ReloadOutcome {
                let routes = "[" + Self.oboRoute(upstream, extra: route) + "]"
                try Data(#"{ "account": \#(account), "routes": \#(routes) }"#.utf8).write(
                    to: URL(fileURLWithPath: file))
                return await proxy.proxy.reload(from: file)
            }
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
            #expect(provider.tokenRequestCount == 1)

            #expect(try await reload(account: TestAccounts.clientSecret(provider)) == .applied(accountChanged: false))
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
            #expect(provider.tokenRequestCount == 1, "the caller's token was not kept across an unchanged reload")

            let basic = TestAccounts.clientSecret(provider, method: "basic")
            #expect(try await reload(account: basic) == .applied(accountChanged: true))
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
            #expect(provider.tokenRequestCount == 2, "a new account sent the caller's token its predecessor got")
            #expect(provider.tokenRequests.last?.authMethod == .basic)

            let narrower = #", "onBehalfOf": { "maxSubjects": 5 }"#
            #expect(try await reload(account: basic, route: narrower) == .applied(accountChanged: false))
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
            #expect(provider.tokenRequestCount == 3, "a route with new settings reused the old settings' tokens")

            let subjects = try upstream.requests.map {
                try jwtClaims($0.head.header("authorization"))["sub"] as? String
            }
            #expect(subjects == Array(repeating: "alice-sub", count: 4))
        }
    }
    @Test(
        "no caller token, another scheme, or two Authorization fields: 401 naming what to send; nothing exchanged or sent",
        arguments: [
            [], [("Authorization", "Basic YWxpY2U6c2VjcmV0")], [("Authorization", "Bearer")],
            [("Authorization", "Bearer a"), ("Authorization", "Bearer b")], [("Authorization", "Bearer a b")],
        ])
    func missingSubject(headers: [(String, String)]) async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            let response = try await TestClient.send(port: proxy.port, uri: "/obo/x", headers: headers)
            #expect(response.status == .unauthorized)
            #expect(try Self.problemType(response) == "urn:bearer-proxy:problem:subject-token-required")
            #expect(response.header("www-authenticate") == #"Bearer realm="bearer-proxy""#)
            #expect(provider.tokenRequestCount == 0)
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("a caller token the provider refuses (expired, or for another client) is the caller's 401, not a sign-in")
    func refusedSubject() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            let expired = FakeIdentityProvider.callerToken(sub: "alice-sub", expiresIn: -60)
            let otherClient = FakeIdentityProvider.callerToken(sub: "alice-sub", client: "another-app")
            for caller in [expired, otherClient] {
                let response = try await Self.send(proxy, caller: caller)
                #expect(response.status == .unauthorized)
                #expect(try Self.problemType(response) == "urn:bearer-proxy:problem:subject-token-refused")
                #expect(response.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)
                #expect(!response.bodyText.contains(caller))
            }
            #expect(upstream.requests.isEmpty)
            #expect(provider.tokenRequests.allSatisfy { $0.outcome != .issued })
            // A healthy caller is not held back by another's refusal.
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
        }
    }

    @Test("Entra's claims challenge reaches the caller in WWW-Authenticate, as MSAL reads it")
    func claimsChallenge() async throws {
        let challenge = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, _ in
            provider.setOnBehalfOfClaimsChallenge(challenge)
            let response = try await Self.send(proxy, caller: FakeIdentityProvider.callerToken(sub: "alice-sub"))
            #expect(response.status == .unauthorized)
            #expect(try Self.problemType(response) == "urn:bearer-proxy:problem:subject-token-refused")
            let header = try #require(response.header("www-authenticate"))
            #expect(header.contains(#"error="insufficient_claims""#))
            let encoded = try #require(header.split(separator: "claims=\"").last?.dropLast())
            #expect(Data(base64Encoded: String(encoded)).map { String(decoding: $0, as: UTF8.self) } == challenge)
        }
    }

    @Test("no consent for the downstream API: 403 consent-required")
    func consentMissing() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, upstream in
            provider.setConsentMissing([Self.downstream])
            let response = try await Self.send(proxy, caller: FakeIdentityProvider.callerToken(sub: "alice-sub"))
            #expect(response.status == .forbidden)
            #expect(try Self.problemType(response) == "urn:bearer-proxy:problem:consent-required")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("the provider down: 503 with Retry-After")
    func providerDown() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { provider, proxy, _ in
            provider.setPersistentFailure(.unavailableRetryAfter(7))
            let response = try await Self.send(proxy, caller: FakeIdentityProvider.callerToken(sub: "alice-sub"))
            #expect(response.status == .serviceUnavailable)
            #expect(response.header("retry-after") != nil)
        }
    }

    @Test("the upstream refuses the exchanged token: exchanged again and sent once more, with a new token")
    func refusedByUpstream() async throws {
        let requests = Mutex(0)
        try await Self.withProxy(
            routes: { Self.oboRoute($0) },
            upstream: { _ in
                let count = requests.withLock { count in
                    count += 1
                    return count
                }
                return count == 1
                    ? .respond(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)], text: "")
                    : .echo
            }
        ) { provider, proxy, upstream in
            let response = try await Self.send(proxy, caller: FakeIdentityProvider.callerToken(sub: "alice-sub"))
            #expect(response.status == .ok)
            #expect(provider.tokenRequestCount == 2)
            let sent = upstream.requests.map { $0.head.header("authorization") }
            try #require(sent.count == 2)
            #expect(sent[0] != sent[1])
            #expect(try jwtClaims(sent[1])["sub"] as? String == "alice-sub")
        }
    }

    @Test("token-exchange: RFC 8693's parameters, the actor token read from its file, the issued token to the audience")
    func tokenExchange() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let actorFile = directory.appendingPathComponent("actor")
        let actor = FakeIdentityJWT.mint(claims: ["sub": "workload-1", "exp": Int(Date().timeIntervalSince1970) + 600])
        try Data(actor.utf8).write(to: actorFile)
        let settings =
            #", "onBehalfOf": { "grant": "token-exchange", "audience": "https://tasks.example", "#
            + #""resource": "https://tasks.example/api", "actorToken": { "file": "\#(actorFile.path)" } }"#
        try await Self.withProxy(routes: { Self.oboRoute($0, extra: settings) }) { provider, proxy, upstream in
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            let response = try await Self.send(proxy, caller: alice)
            #expect(response.status == .ok, "\(response.bodyText)")
            let claims = try jwtClaims(upstream.requests.last?.head.header("authorization"))
            #expect(claims["sub"] as? String == "alice-sub")
            #expect(claims["aud"] as? String == "https://tasks.example")
            #expect((claims["act"] as? [String: Any])?["sub"] as? String == "workload-1")
            let request = try #require(provider.tokenRequests.last)
            #expect(request.grantType == OnBehalfOfFlow.tokenExchangeGrant)
            #expect(request.parameters["subject_token"] == alice)
            #expect(request.parameters["subject_token_type"] == OnBehalfOfSettings.accessTokenType)
            #expect(request.parameters["audience"] == "https://tasks.example")
            #expect(request.parameters["resource"] == "https://tasks.example/api")
            #expect(request.parameters["scope"] == "\(Self.downstream)/.default")
            #expect(request.parameters["actor_token"] == actor)
            #expect(request.parameters["actor_token_type"] == OnBehalfOfSettings.jwtTokenType)
            #expect(request.parameters["requested_token_use"] == nil)
        }
    }

    @Test("token-exchange refuses an invalid subject with invalid_request (RFC 8693 §2.2.2): the caller's 401")
    func tokenExchangeRefusal() async throws {
        let settings = #", "onBehalfOf": { "grant": "token-exchange" }"#
        try await Self.withProxy(routes: { Self.oboRoute($0, extra: settings) }) { _, proxy, upstream in
            let response = try await Self.send(proxy, caller: "not.a.token")
            #expect(response.status == .unauthorized)
            #expect(try Self.problemType(response) == "urn:bearer-proxy:problem:subject-token-refused")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("a bearer route beside it still sends the account's token, and never a caller's")
    func besideABearerRoute() async throws {
        try await Self.withProxy(
            routes: { Self.oboRoute($0) + ", " + route("/app", to: $0, scopes: ["api://app/.default"]) }
        ) { _, proxy, upstream in
            let alice = FakeIdentityProvider.callerToken(sub: "alice-sub")
            #expect(try await Self.send(proxy, caller: alice).status == .ok)
            #expect(try await Self.send(proxy, "/app/x", caller: alice).status == .ok)
            let app = try jwtClaims(upstream.requests.last?.head.header("authorization"))
            #expect(app["idtyp"] as? String == "app")
            #expect(app["aud"] as? String == "api://app")
        }
    }

    @Test("HTTP/2: streams of two callers on one connection each get their own token; two authorization fields: 401")
    func http2Streams() async throws {
        try await Self.withProxy(routes: { Self.oboRoute($0) }) { _, proxy, upstream in
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            var statuses: [Int?] = []
            for caller in ["alice-sub", "bob-sub", "alice-sub"] {
                let token = FakeIdentityProvider.callerToken(sub: caller)
                let response = try await client.send(
                    HTTP2TestClient.request("GET", "/obo/\(caller)", fields: [("authorization", "Bearer \(token)")]))
                statuses.append(response.status)
            }
            let twice = try await client.send(
                HTTP2TestClient.request(
                    "GET", "/obo/x", fields: [("authorization", "Bearer a"), ("authorization", "Bearer b")]))
            await client.close()
            #expect(statuses == [200, 200, 200])
            #expect(twice.status == 401)
            let subjects = try upstream.requests.map {
                try jwtClaims($0.head.header("authorization"))["sub"] as? String
            }
            #expect(subjects == ["alice-sub", "bob-sub", "alice-sub"])
        }
    }

    @Test("maxSubjects bounds the callers kept: past it the least recently used is forgotten, and asked again later")
    func boundedCallers() async throws {
        let settings = #", "onBehalfOf": { "maxSubjects": 50 }"#
        try await Self.withProxy(routes: { Self.oboRoute($0, extra: settings) }) { provider, proxy, _ in
            let tokens = (0..<120).map { FakeIdentityProvider.callerToken(sub: "user-\($0)") }
            for token in tokens {
                let response = try await Self.send(proxy, caller: token)
                #expect(response.status == .ok)
            }
            let account = proxy.proxy.account
            #expect(account.onBehalfOf.subjectCounts(for: account.configuration) == ["/obo": 50])
            // The last caller is kept (no new exchange); the first was forgotten (exchanged again).
            #expect(try await Self.send(proxy, caller: tokens[119]).status == .ok)
            #expect(provider.tokenRequestCount == 120)
            #expect(try await Self.send(proxy, caller: tokens[0]).status == .ok)
            #expect(provider.tokenRequestCount == 121)
        }
    }

    /// 1,000 callers, 10 requests each, all at once: one exchange per caller, and the upstream checks on every request
    /// that the token it got is for the caller who sent it.
    @Test("1,000 callers × 10 concurrent requests: one exchange each, and no caller ever gets another's token")
    func manyCallers() async throws {
        let callers = 1_000
        let perCaller = 10
        let tokens = (0..<callers).map { FakeIdentityProvider.callerToken(sub: "user-\($0)") }
        try await Self.withProxy(
            routes: { Self.oboRoute($0) },
            upstream: { head in
                // The upstream's check: the exchanged token's subject is the caller named by the request's path.
                let expected = head.uri.split(separator: "/").last.map(String.init) ?? ""
                let sub = (try? jwtClaims(head.header("authorization")))?["sub"] as? String
                return sub == expected ? .respond(status: 200, text: "ok") : .respond(status: 403, text: "wrong")
            }
        ) { provider, proxy, _ in
            let statuses = try await withThrowingTaskGroup(of: [UInt].self) { group in
                // 50 kept-alive client connections at once, each sending its callers' requests in turn: 10,000
                // requests in all, every caller's ten spread over the run.
                let lanes = 50
                for lane in 0..<lanes {
                    group.addTask {
                        let connection = try await TestConnection.open(port: proxy.port)
                        var seen: [UInt] = []
                        for _ in 0..<perCaller {
                            for caller in stride(from: lane, to: callers, by: lanes) {
                                let response = try await connection.send(
                                    uri: "/obo/user-\(caller)", headers: [("Authorization", "Bearer \(tokens[caller])")]
                                )
                                seen.append(response.status.code)
                            }
                        }
                        await connection.close()
                        return seen
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == callers * perCaller)
            let account = proxy.proxy.account
            #expect(account.onBehalfOf.subjectCounts(for: account.configuration) == ["/obo": callers])
            #expect(statuses.allSatisfy { $0 == 200 })
            let exchanges = provider.tokenRequests.compactMap { $0.parameters["assertion"] }
            #expect(exchanges.count == callers)
            #expect(Set(exchanges).count == callers)
        }
    }
}

/// The pure parts: the subject's extraction, and the bounded caches of callers' tokens.
@Suite("On behalf of the caller: subject and caches")
struct SubjectTokenCachesTests {
    @Test("the subject is the credential of exactly one Authorization: Bearer field, a token68")
    func subject() {
        #expect(SubjectToken.of(authorization: ["Bearer abc.def-_~+/="]) == "abc.def-_~+/=")
        #expect(SubjectToken.of(authorization: ["bearer  abc"]) == "abc")
        for refused in [
            [], ["Basic abc"], ["Bearer"], ["Bearer "], ["Bearer a b"], ["Bearer a=b"], ["Bearer =a"],
            ["Bearer a\u{1}"], ["Bearer a", "Bearer a"], ["DPoP abc"],
        ] {
            #expect(SubjectToken.of(authorization: refused) == nil, "\(refused)")
        }
    }

    /// A cache whose flow answers with a token naming its subject, valid for `lifetime` seconds by `clock`.
    static func caches(
        maximum: Int, clock: TestClock = TestClock(),
        lifetime: @escaping @Sendable (String) -> TimeInterval = { _ in 3600 }
    ) -> SubjectTokenCaches {
        SubjectTokenCaches(maximum: maximum) { subject in
            TokenCache(
                flow: EchoSubjectFlow(subject: subject, lifetime: lifetime(subject), clock: clock), now: { clock.now })
        }
    }

    @Test("one cache per subject; the least recently used is forgotten past the maximum")
    func bounded() async throws {
        let caches = Self.caches(maximum: 3)
        let a = caches.tokens(forSubject: "a")
        #expect(caches.tokens(forSubject: "a") === a)
        _ = caches.tokens(forSubject: "b")
        _ = caches.tokens(forSubject: "c")
        _ = caches.tokens(forSubject: "a")
        _ = caches.tokens(forSubject: "d")
        #expect(caches.count == 3)
        #expect(caches.tokens(forSubject: "a") === a)
        let scopes = ScopeSet(["api://x/.default"])
        #expect(try await caches.tokens(forSubject: "e").accessToken(for: scopes).value == "token-for-e")
        #expect(try await a.accessToken(for: scopes).value == "token-for-a")
    }

    @Test("the sweep forgets subjects whose tokens have expired, and keeps the others")
    func forgetSpent() async throws {
        let scopes = ScopeSet(["api://x/.default"])
        let clock = TestClock()
        let caches = Self.caches(maximum: 10, clock: clock) { $0 == "short" ? 600 : 7200 }
        _ = try await caches.tokens(forSubject: "short").accessToken(for: scopes)
        _ = try await caches.tokens(forSubject: "long").accessToken(for: scopes)
        #expect(caches.forgetSpent() == 0)
        _ = caches.tokens(forSubject: "never-asked")
        clock.advance(3600)
        #expect(caches.forgetSpent() == 2)
        #expect(caches.count == 1)
        #expect(try await caches.tokens(forSubject: "long").accessToken(for: scopes).value == "token-for-long")
    }
}

/// A flow that issues `token-for-<subject>`.
private struct EchoSubjectFlow: SignInFlow {
    let subject: String
    let lifetime: TimeInterval
    let clock: TestClock
    let name = "echo"

    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        let now = clock.now
        return AccessToken(
            value: "token-for-\(subject)", scopes: request.scopes, expiresOn: now.addingTimeInterval(lifetime),
            issuedAt: now)
    }
}
