import NIOCore
import Synchronization
import Testing

@testable import BearerDataPlane

/// The token rules live above the upstream's transport: over HTTP/2 as over HTTP/1.1, a token the upstream refuses is
/// replaced and the request sent again once.
@Suite("HTTP/2 upstreams: a refused token is refreshed and the request replayed once")
struct HTTP2UpstreamTokenTests {
    @Test("a 401 invalid_token from an h2c upstream: the replay and every request after it carry the new token")
    func refusedTokenReplayedOnce() async throws {
        let refusals = Atomic<Int>(0)
        try await withIdentityProvider { provider in
            let upstream = try await FakeHTTP2Upstream.start { request in
                guard request.path.hasSuffix("/b"), refusals.add(1, ordering: .relaxed).oldValue == 0 else {
                    return .respond(status: 200, body: ByteBuffer(string: "ok"))
                }
                return .respond(status: 401, fields: [("www-authenticate", #"Bearer error="invalid_token""#)])
            }
            do {
                try await ProxyHarness.with(
                    routes: HTTP2UpstreamTests.route(to: upstream.baseURL, version: "h2", tls: false),
                    account: TestAccounts.refreshToken(provider), environment: TestAccounts.environment(provider)
                ) { proxy in
                    let connection = try await TestConnection.open(port: proxy.port)
                    for path in ["/api/a", "/api/b", "/api/c", "/api/d"] {
                        let response = try await connection.send(uri: path)
                        #expect(response.status == .ok, "\(path): \(response.bodyText)")
                    }
                    await connection.close()
                }
                let requests = upstream.requests
                #expect(requests.map { $0.path.split(separator: "/").last ?? "" } == ["a", "b", "b", "c", "d"])
                // Which token each carried, numbered in order of first use (the tokens stay out of the output).
                var seen: [String] = []
                let numbered = requests.map { request -> Int in
                    guard let token = request.header("authorization") else { return -1 }
                    if let known = seen.firstIndex(of: token) { return known }
                    seen.append(token)
                    return seen.count - 1
                }
                #expect(numbered == [0, 0, 1, 1, 1], "the refused token was sent after its refusal")
                #expect(provider.tokenRequests.count == 2)
            } catch {
                try? await upstream.shutdown()
                throw error
            }
            try await upstream.shutdown()
        }
    }
}
