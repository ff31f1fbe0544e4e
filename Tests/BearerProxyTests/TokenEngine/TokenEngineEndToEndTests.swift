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

@Suite("Token engine end to end: a real proxy, a fake identity provider, fake upstreams")
struct TokenEngineEndToEndTests {
    // 200, not more: each request holds a client and a proxy socket in this one process, and an ordinary account
    // may check each connection's peer user by reading /proc/net/tcp, which grows with every socket open.
    @Test("200 concurrent requests on a cold cache: exactly one token request per scope set")
    func singleFlightThroughTheProxy() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .respond(status: 200, text: "ok") }) { upstream in
                let routes =
                    "[" + route("/a", to: upstream, scopes: ["api://alpha/Read"]) + ", "
                    + route("/b", to: upstream, scopes: ["api://beta/Read"]) + "]"
                try await ProxyHarness.with(
                    routes: routes, account: TestAccounts.refreshToken(provider),
                    environment: TestAccounts.environment(provider)
                ) { proxy in
                    provider.holdTokenResponses()
                    let port = proxy.port
                    let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                        for index in 0..<200 {
                            group.addTask {
                                try await TestClient.send(port: port, uri: index % 2 == 0 ? "/a/x" : "/b/x").status.code
                            }
                        }
                        // One scope set's token request is in flight and held; the other scope set's waits for its
                        // turn (one redemption of the refresh token at a time); nothing else may be asked.
                        try await provider.waitForHeldTokenResponses(1)
                        provider.releaseTokenResponses()
                        var statuses: [UInt] = []
                        for try await status in group { statuses.append(status) }
                        return statuses
                    }
                    #expect(statuses.count == 200)
                    #expect(
                        statuses.allSatisfy { $0 == 200 },
                        "statuses: \(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))")
                    #expect(provider.tokenRequestCount(forScope: "api://alpha/Read") == 1)
                    #expect(provider.tokenRequestCount(forScope: "api://beta/Read") == 1)
                    #expect(provider.tokenRequestCount == 2)
                }
            }
        }
    }

    @Test("two routes with different resources get different tokens, each only at its own upstream")
    func tokensStayWithTheirRoute() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { graph in
                try await withUpstream({ _ in .echo }) { todo in
                    let routes =
                        "[" + route("/graph", to: graph, scopes: ["User.Read"]) + ", "
                        + route("/todo", to: todo, scopes: ["api://todo/ToDoList.Read"]) + "]"
                    try await ProxyHarness.with(
                        routes: routes, account: TestAccounts.refreshToken(provider),
                        environment: TestAccounts.environment(provider)
                    ) { proxy in
                        for _ in 0..<3 {
                            _ = try await TestClient.send(port: proxy.port, uri: "/graph/me")
                            _ = try await TestClient.send(port: proxy.port, uri: "/todo/items")
                        }
                        let graphAudiences = Set(graph.requests.compactMap { audience($0) })
                        let todoAudiences = Set(todo.requests.compactMap { audience($0) })
                        #expect(graphAudiences == ["https://graph.microsoft.com"])
                        #expect(todoAudiences == ["api://todo"])
                        let graphTokens = Set(graph.requests.compactMap { $0.head.header("authorization") })
                        let todoTokens = Set(todo.requests.compactMap { $0.head.header("authorization") })
                        #expect(graphTokens.isDisjoint(with: todoTokens))
                        #expect(provider.tokenRequestCount == 2)
                    }
                }
            }
        }
    }

    @Test("invalid_token: the token is dropped, a new one fetched, the request replayed once")
    func invalidTokenReplaysOnce() async throws {
        let rejected = Mutex<Set<String>>([])
        try await withIdentityProvider { provider in
            // The upstream rejects the first token it sees and accepts any other.
            try await withUpstream({ head in
                let token = head.header("authorization") ?? ""
                let first = rejected.withLock { set -> Bool in
                    if set.isEmpty { set.insert(token) }
                    return set.contains(token)
                }
                return first
                    ? .respond(
                        status: 401, headers: [("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#)])
                    : .echo
            }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    let response = try await TestClient.send(
                        port: proxy.port, method: "POST", uri: "/api/items", body: .text(#"{"title":"milk"}"#))
                    #expect(response.status == .ok)
                    let echo = try response.echo()
                    #expect(echo.bodySHA256 == TestBody.text(#"{"title":"milk"}"#).sha256)
                    #expect(upstream.requests.count == 2)
                    #expect(provider.tokenRequestCount == 2)
                    let tokens = upstream.requests.compactMap { $0.head.header("authorization") }
                    #expect(tokens.count == 2 && tokens[0] != tokens[1])
                }
            }
        }
    }

    @Test("a second invalid_token passes through to the client; a large body is never replayed")
    func replayLimits() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in
                .respond(
                    status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)], text: "expired")
            }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    let small = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(small.status == .unauthorized)
                    #expect(small.bodyText == "expired")
                    #expect(upstream.requests.count == 2)  // once, then once replayed — no more

                    let large = try await TestClient.send(
                        port: proxy.port, method: "PUT", uri: "/api/x",
                        body: .stream(length: ExchangeStateMachine.replayLimit + 1, chunked: false))
                    #expect(large.status == .unauthorized)
                    #expect(upstream.requests.count == 3)  // no replay for a body that was not kept
                }
            }
        }
    }

    @Test("insufficient_claims: a token is requested with those claims and the request replayed")
    func claimsChallenge() async throws {
        let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        let encoded = Data(claims.utf8).base64EncodedString()
        try await withIdentityProvider { provider in
            try await withUpstream({ head in
                let token = head.header("authorization").map { String($0.dropFirst(7)) } ?? ""
                let tokenClaims = FakeIdentityProvider.claims(ofAccessToken: token) ?? [:]
                let satisfied = (tokenClaims["acrs"] as? [String])?.contains("c1") ?? false
                return satisfied
                    ? .echo
                    : .respond(
                        status: 401,
                        headers: [
                            ("WWW-Authenticate", #"Bearer realm="", error="insufficient_claims", claims="\#(encoded)""#)
                        ])
            }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .ok)
                    #expect(provider.tokenRequests.count == 2)
                    let requested = try #require(provider.tokenRequests.last?.claims)
                    #expect(requested.contains("acrs"))
                    #expect(upstream.requests.count == 2)
                }
            }
        }
    }

    @Test("403 insufficient_scope passes through untouched, without a retry")
    func insufficientScope() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in
                .respond(
                    status: 403,
                    headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="api://todo/Write""#)],
                    text: "need write")
            }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .forbidden)
                    #expect(response.bodyText == "need write")
                    #expect(response.header("www-authenticate")?.contains("insufficient_scope") == true)
                    #expect(upstream.requests.count == 1)
                    #expect(provider.tokenRequestCount == 1)
                }
            }
        }
    }

    @Test("provider down: 503 problem+json with Retry-After, and the upstream is never contacted")
    func providerDown() async throws {
        try await withIdentityProvider { provider in
            // Long enough that five requests fit in it on a loaded machine: with 17 s, a run of the whole suite
            // in parallel once stretched them past it, and the sixth provider request was the block ending.
            provider.setPersistentFailure(.unavailableRetryAfter(600))
            try await withUpstream({ _ in .echo }) { upstream in
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    for _ in 0..<5 {
                        let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                        #expect(response.status == .serviceUnavailable)
                        #expect(response.header("content-type") == "application/problem+json")
                        let retryAfter = try #require(response.header("retry-after").flatMap(Int.init))
                        #expect((1...600).contains(retryAfter))
                    }
                    #expect(upstream.requests.isEmpty)
                    // Five client requests, one provider request: the failure is not repeated before Retry-After.
                    #expect(provider.tokenRequestCount == 1)
                }
            }
        }
    }

    @Test("an expired refresh token (AADSTS700082) answers 401 telling the user to run bearer-proxy login")
    func refreshTokenExpired() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let environment = TestAccounts.environment(provider)
                provider.revokeRefreshTokens(for: .alice)
                try await ProxyHarness.with(
                    routes: "[" + route(to: upstream, scopes: ["api://todo/Read"]) + "]",
                    account: TestAccounts.refreshToken(provider), environment: environment
                ) { proxy in
                    let response = try await TestClient.send(port: proxy.port, uri: "/api/x")
                    #expect(response.status == .unauthorized)
                    let problem = try response.jsonObject()
                    #expect(problem["type"] as? String == "urn:bearer-proxy:problem:sign-in-required")
                    let detail = try #require(problem["detail"] as? String)
                    #expect(detail.contains("bearer-proxy login"))
                    #expect(detail.contains("700082"))
                    #expect(upstream.requests.isEmpty)
                }
            }
        }
    }
}

/// The `aud` of the bearer token an upstream received.
func audience(_ request: RecordedRequest) -> String? {
    guard let value = request.head.header("authorization"), value.hasPrefix("Bearer ") else { return nil }
    return FakeIdentityProvider.claims(ofAccessToken: String(value.dropFirst(7)))?["aud"] as? String
}
