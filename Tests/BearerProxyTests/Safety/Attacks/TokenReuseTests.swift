import Foundation
import Synchronization
import Testing

@testable import BearerConfiguration
@testable import BearerRuntime
@testable import BearerTokens

/// Each event loop sends its last route's token again without the token cache's lock while the cache would give the
/// same one (`EventLoopState.cachedToken`, `TokenCache.ReusableToken`). These attack that reuse on real sockets at
/// its worst moments — right after a request that set it up, on the same connection and loop: an upstream that
/// refuses the token, and a sign-out. A reuse that outlived either would send a token the upstream refused, or one
/// its owner signed out of.
@Suite("Attack: a reused token never outlives the cache's word")
struct TokenReuseTests {
    static let refuse = RawUpstream.Answer.respond(
        status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])

    /// The proxy for `upstream` with a `refresh-token` account on `provider` (one event loop, so every request
    /// below meets the same reuse), run through `body`.
    static func withProxy(
        _ provider: FakeIdentityProvider, upstream: RawUpstream, _ body: (RunningProxy) async throws -> Void
    ) async throws {
        let directory = try GenerationTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("routes.json")
        try GenerationTests.writeConfiguration(TestAccounts.refreshToken(provider), upstream: upstream, to: file)
        try await GenerationTests.withProxy(file, provider: provider, body)
    }

    /// The `Authorization` each request carried, as the number of its first appearance (0, 1, …; -1 for none).
    static func numbered(_ requests: [RawRequest]) -> [Int] {
        var seen: [String] = []
        return requests.map { request in
            guard let token = request.header("authorization").first else { return -1 }
            if let known = seen.firstIndex(of: token) { return known }
            seen.append(token)
            return seen.count - 1
        }
    }

    /// Runs `body` with one connection to `proxy`, closed afterwards whether `body` throws or not.
    static func onOneConnection(
        _ proxy: RunningProxy, _ body: (TestConnection) async throws -> Void
    ) async throws {
        let connection = try await TestConnection.open(port: proxy.server.port)
        do {
            try await body(connection)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    @Test("a token the upstream refused is not sent again: the replay and every request after it carry the new one")
    func refusedTokenIsNotReused() async throws {
        let refusals = Atomic<Int>(0)
        try await withIdentityProvider { provider in
            // The second request's token is refused, once; everything else is answered.
            try await RawUpstream.with(answer: { request in
                guard request.uri.hasSuffix("/b"), refusals.add(1, ordering: .relaxed).oldValue == 0 else {
                    return .respond(status: 200, body: "ok")
                }
                return Self.refuse
            }) { upstream in
                try await Self.withProxy(provider, upstream: upstream) { proxy in
                    try await Self.onOneConnection(proxy) { connection in
                        for path in ["/api/a", "/api/b", "/api/c", "/api/d"] {
                            let response = try await connection.send(method: "GET", uri: path)
                            #expect(response.status == .ok, "\(path): \(response.bodyText)")
                        }
                    }
                    let requests = upstream.requests
                    #expect(requests.map { $0.uri.split(separator: "/").last ?? "" } == ["a", "b", "b", "c", "d"])
                    // Which token each carried, numbered in order of first use (the tokens themselves stay out of
                    // the test's output).
                    #expect(Self.numbered(requests) == [0, 0, 1, 1, 1], "the refused token was sent after its refusal")
                    #expect(provider.tokenRequests.count == 2)
                }
            }
        }
    }

    @Test("two routes, two scope sets, one event loop: each upstream sees only its own audience's token")
    func reuseIsPerRoute() async throws {
        try await withUpstream({ _ in .echo }) { first in
            try await withUpstream({ _ in .echo }) { second in
                let routes = """
                    [{ "prefix": "/a", "upstream": "\(first.baseURL)", "scopes": ["api://first/Read"] },
                     { "prefix": "/b", "upstream": "\(second.baseURL)", "scopes": ["api://second/Read"] }]
                    """
                try await ProxyHarness.with(routes: routes) { harness in
                    // One connection is served by one event loop: every request meets that loop's reused token.
                    try await Self.onOneConnection(harness.proxy) { connection in
                        for path in ["/a/1", "/b/1", "/b/2", "/a/2", "/a/3", "/b/3"] {
                            let response = try await connection.send(method: "GET", uri: path)
                            #expect(response.status == .ok, "\(path)")
                        }
                    }
                }
                for (upstream, audience) in [(first, "api://first"), (second, "api://second")] {
                    let seen = try upstream.requests.map {
                        try jwtClaims($0.head.headers["authorization"].first)["aud"] as? String
                    }
                    #expect(seen == [audience, audience, audience], "\(audience)'s upstream got another's token")
                }
            }
        }
    }

    @Test("a sign-out between two requests on one connection: the second does not carry the signed-out token")
    func signOutEndsTheReuse() async throws {
        try await withIdentityProvider { provider in
            try await RawUpstream.with(answer: { _ in .respond(status: 200, body: "ok") }) { upstream in
                try await Self.withProxy(provider, upstream: upstream) { proxy in
                    try await Self.onOneConnection(proxy) { connection in
                        #expect(try await connection.send(method: "GET", uri: "/api/a").status == .ok)
                        #expect(try await connection.send(method: "GET", uri: "/api/b").status == .ok)
                        // Another process signed out (the token file's word, as serve hears it): no token of the
                        // signed-out account may be sent.
                        proxy.tokens.replaceTokens(with: [], because: .signedOut)
                        _ = try await connection.send(method: "GET", uri: "/api/c")
                    }
                    let tokens = Self.numbered(upstream.requests)
                    #expect(tokens.count == 3)
                    #expect(tokens.prefix(2) == [0, 0], "the second request reused the first's token")
                    #expect(!tokens.dropFirst(2).contains(0), "a token signed out of was sent again")
                }
            }
        }
    }
}
