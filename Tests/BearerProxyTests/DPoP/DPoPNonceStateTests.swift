import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// An upstream's DPoP nonce (RFC 9449 §9) is the proxy's protocol state: it stays out of the client's answer on a
/// route that signs proofs, it is kept across a reload, and it is shared by the routes of one sign-in to one origin,
/// per key. On real sockets against ``FakeDPoPResourceServer``, whose every refusal shows in its record.
@Suite struct DPoPNonceStateTests {
    static let scopes = DPoPUpstreamTests.scopes

    /// The routes: `/r` and `/s` to two paths of `resource`, and `/plain` (no token) to `plain`.
    static func routes(_ resource: FakeDPoPResourceServer, plain: FakeUpstream, extra: String = "") -> String {
        "["
            + #"{ "prefix": "/r", "upstream": "\#(resource.baseURL)/base", "scopes": ["\#(scopes)"] }, "#
            + #"{ "prefix": "/s", "upstream": "\#(resource.baseURL)/other", "scopes": ["\#(scopes)"] }, "#
            + #"{ "prefix": "/plain", "upstream": "\#(plain.baseURL)", "auth": "none" }"# + extra + "]"
    }

    /// A proxy whose account gets DPoP-bound tokens from `authorization`, with ``routes(_:plain:extra:)``; `plain`
    /// answers every request with a `DPoP-Nonce` of its own.
    static func with(
        nonce: FakeDPoPResourceServer.NonceRule,
        _ body: (ProxyHarness, FakeDPoPResourceServer, FakeDPoPAuthorizationServer, FakeUpstream) async throws -> Void
    ) async throws {
        try await withDPoPAuthorizationServer { authorization in
            try await withDPoPResourceServer(nonce: nonce) { resource in
                try await withUpstream({ _ in .respond(status: 200, headers: [("DPoP-Nonce", "plain-nonce")]) }) {
                    plain in
                    try await ProxyHarness.with(
                        routes: Self.routes(resource, plain: plain),
                        account: DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(
                            authorization),
                        environment: [DPoPTokenRequestTests.secretVariable: "s3cret"]
                    ) { proxy in try await body(proxy, resource, authorization, plain) }
                }
            }
        }
    }

    @Test func theUpstreamsNonceIsNotPassedToTheClientOfADPoPRoute() async throws {
        try await Self.with(nonce: .required) { proxy, resource, _, _ in
            // The challenge the proxy met itself, and the answer to its replay: neither nonce reaches the client.
            let first = try await TestClient.send(port: proxy.port, uri: "/r/items")
            #expect(first.status == .ok, "\(first.bodyText)")
            #expect(resource.requests.map(\.status) == [401, 200])
            #expect(first.headers["dpop-nonce"].isEmpty)
            #expect(first.headers["www-authenticate"].isEmpty, "the challenge the proxy answered stays with it")
            let second = try await TestClient.send(port: proxy.port, uri: "/r/items")
            #expect(second.status == .ok)
            #expect(second.headers["dpop-nonce"].isEmpty)
            // A route that signs no proofs passes the field on, as any other.
            let plain = try await TestClient.send(port: proxy.port, uri: "/plain/x")
            #expect(plain.headers["dpop-nonce"] == ["plain-nonce"])
        }
    }

    @Test func aChallengeTheReplayCouldNotMeetReachesTheClientWithoutTheNonce() async throws {
        try await Self.with(nonce: .rotateEveryRequest) { proxy, resource, _, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/r/items")
            #expect(response.status == .unauthorized)
            #expect(resource.requests.count == 2, "one replay, never a loop")
            // The upstream's refusal says why; the nonce in it is the proxy's to use, and it has used one already.
            #expect(
                response.headers.first(name: "www-authenticate")?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true)
            #expect(response.headers["dpop-nonce"].isEmpty)
        }
    }

    @Test func theRoutesOfOneSignInShareTheOriginsNonce() async throws {
        try await Self.with(nonce: .required) { proxy, resource, _, _ in
            let first = try await TestClient.send(port: proxy.port, uri: "/r/a")
            #expect(first.status == .ok, "\(first.bodyText)")
            let otherRoute = try await TestClient.send(port: proxy.port, uri: "/s/b")
            #expect(otherRoute.status == .ok, "\(otherRoute.bodyText)")
            // One challenge for the origin, not one a route.
            #expect(resource.requests.map(\.status) == [401, 200, 200])
            #expect(resource.requests[2].accepted?.nonce == resource.currentNonce)
        }
    }

    @Test func aReloadKeepsTheUpstreamsNonce() async throws {
        let directory = NSTemporaryDirectory() + "bp-dpop-reload-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/routes.json"
        try await Self.with(nonce: .required) { proxy, resource, authorization, plain in
            let beforeReload = try await TestClient.send(port: proxy.port, uri: "/r/a")
            #expect(beforeReload.status == .ok, "\(beforeReload.bodyText)")
            #expect(resource.requests.map(\.status) == [401, 200])
            // The same account, one more route: a new generation.
            let account = DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(authorization)
            let routes = Self.routes(
                resource, plain: plain,
                extra: #", { "prefix": "/new", "upstream": "\#(resource.baseURL)/new", "scopes": ["\#(Self.scopes)"] }"#
            )
            try Data(#"{ "account": \#(account), "routes": \#(routes) }"#.utf8).write(to: URL(fileURLWithPath: file))
            #expect(await proxy.proxy.reload(from: file) == .applied(accountChanged: false))
            let afterReload = try await TestClient.send(port: proxy.port, uri: "/r/a")
            #expect(afterReload.status == .ok, "\(afterReload.bodyText)")
            let newRoute = try await TestClient.send(port: proxy.port, uri: "/new/b")
            #expect(newRoute.status == .ok, "\(newRoute.bodyText)")
            #expect(resource.requests.map(\.status) == [401, 200, 200, 200], "no second challenge after the reload")
        }
    }

    /// The store's logic alone: an origin keeps a nonce per key, and a bounded number of keys.
    @Test func anOriginKeepsEachKeysOwnNonce() throws {
        let store = UpstreamNonceStore()
        let origin = store.nonce(forOrigin: "https://api.example.com")
        #expect(store.nonce(forOrigin: "https://api.example.com") === origin)
        #expect(store.nonce(forOrigin: "https://other.example.com") !== origin)
        func answer(_ nonce: String) throws -> UpstreamResponse {
            try UpstreamResponse.parsing("HTTP/1.1 200 OK\r\nDPoP-Nonce: \(nonce)\r\nContent-Length: 0\r\n\r\n")
        }
        #expect(origin.note(try answer("n-a"), for: "key-a"))
        #expect(origin.note(try answer("n-b"), for: "key-b"))
        #expect(origin.current(for: "key-a") == "n-a")
        #expect(origin.current(for: "key-b") == "n-b")
        #expect(origin.current(for: "key-c") == nil)
        #expect(!origin.note(try answer("not one"), for: "key-a"))
        #expect(origin.current(for: "key-a") == "n-a")
        for index in 0..<UpstreamNonce.maximumKeys { origin.note(try answer("n-\(index)"), for: "other-\(index)") }
        #expect(origin.current(for: "key-a") == nil, "the least recently given goes first")
        #expect(origin.current(for: "other-0") == "n-0")
    }
}
