import Foundation
import NIOCore
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

/// DPoP at the upstream (RFC 9449 §7, §9), on real sockets: a proxy whose account gets DPoP-bound tokens from
/// ``FakeDPoPAuthorizationServer`` forwards to ``FakeDPoPResourceServer``, which checks every request as §7.1 asks and
/// refuses any mistake — so every test here that expects a `200` shows the proxy made none.
@Suite struct DPoPUpstreamTests {
    static let scopes = "api://orders/.default"

    /// A proxy whose account takes DPoP tokens from `authorization`, with `/r` to `resource`'s `/base` (with
    /// `routeExtra` members) and `/plain` to an echo upstream that sends no token (`auth` `none`).
    static func withProxy(
        _ authorization: FakeDPoPAuthorizationServer, _ resource: FakeDPoPResourceServer,
        accountTokenType: String = "dpop",
        routeExtra: String = "", _ body: (ProxyHarness, FakeUpstream) async throws -> Void
    ) async throws {
        try await withUpstream({ _ in .echo }) { echo in
            let routes =
                #"[{ "prefix": "/r", "upstream": "\#(resource.baseURL)/base", "scopes": ["\#(scopes)"]\#(routeExtra) }, "#
                + #"{ "prefix": "/plain", "upstream": "\#(echo.baseURL)", "auth": "none" }]"#
            try await ProxyHarness.with(
                routes: routes,
                account: DPoPTokenRequestTests.Account.clientCredentials(tokenType: accountTokenType).json(
                    authorization),
                environment: [DPoPTokenRequestTests.secretVariable: "s3cret"]
            ) { proxy in try await body(proxy, echo) }
        }
    }

    /// Runs `body` with both fakes and a proxy between them.
    static func with(
        nonce: FakeDPoPResourceServer.NonceRule = .never, routeExtra: String = "",
        _ body: (ProxyHarness, FakeDPoPResourceServer, FakeDPoPAuthorizationServer) async throws -> Void
    ) async throws {
        try await withDPoPAuthorizationServer { authorization in
            try await withDPoPResourceServer(nonce: nonce) { resource in
                try await withProxy(authorization, resource, routeExtra: routeExtra) { proxy, _ in
                    try await body(proxy, resource, authorization)
                }
            }
        }
    }

    @Test func everyRequestCarriesAFreshProofForExactlyWhatWasSentUpstream() async throws {
        try await Self.with { proxy, resource, authorization in
            let sent: [(method: String, uri: String, body: TestBody)] = [
                ("GET", "/r/items?q=1&page=2", .none), ("GET", "/r/items?q=1&page=2", .none),
                ("POST", "/r/items", .bytes(Array(#"{"name":"x"}"#.utf8))), ("DELETE", "/r", .none),
                ("GET", "/r/a%2Fb/c", .none),
            ]
            for request in sent {
                let response = try await TestClient.send(
                    port: proxy.port, method: request.method, uri: request.uri, body: request.body)
                #expect(response.status == .ok, "\(request.method) \(request.uri): \(response.bodyText)")
            }
            let received = resource.requests
            try #require(received.count == sent.count)
            // htu: the upstream's scheme, authority and path as sent there (the base path, then what follows the
            // prefix, percent-encoding kept), without the query.
            #expect(
                received.map { $0.accepted?.htu }
                    == [
                        "/base/items", "/base/items", "/base/items", "/base", "/base/a%2Fb/c",
                    ].map { resource.baseURL + $0 })
            #expect(received.map(\.method) == sent.map(\.method))
            #expect(Set(received.compactMap { $0.accepted?.jti }).count == sent.count, "a jti is never reused")
            #expect(received.allSatisfy { $0.proofs.count == 1 && $0.authorization?.hasPrefix("DPoP ") == true })
            // One key: the account's, whose thumbprint the authorization server bound the token to.
            let thumbprints = Set(received.compactMap { $0.accepted?.thumbprint })
            #expect(thumbprints.count == 1)
            #expect(thumbprints.first == authorization.requests.first?.accepted?.thumbprint)
            #expect(received[2].body == Array(#"{"name":"x"}"#.utf8))
        }
    }

    @Test func aNonceChallengeIsMetOnceAndTheNonceKeptForTheNextRequest() async throws {
        try await Self.with(nonce: .required) { proxy, resource, _ in
            let first = try await TestClient.send(
                port: proxy.port, method: "POST", uri: "/r/orders", body: .bytes(Array("order-1".utf8)))
            #expect(first.status == .ok, "\(first.bodyText)")
            try #require(resource.requests.count == 2)
            #expect(resource.requests.map(\.status) == [401, 200])
            #expect(resource.requests.map(\.error) == ["use_dpop_nonce", nil])
            #expect(resource.requests[1].accepted?.nonce == resource.currentNonce)
            // The replay is the same request, body and all, with a new proof.
            #expect(resource.requests[1].body == Array("order-1".utf8))
            #expect(resource.requests[0].proofs != resource.requests[1].proofs)
            // The nonce the last answer carried serves the next request at once.
            let second = try await TestClient.send(port: proxy.port, uri: "/r/orders")
            #expect(second.status == .ok)
            #expect(resource.requests.map(\.status) == [401, 200, 200])
            // An old nonce is replaced once.
            resource.rotateNonce()
            let third = try await TestClient.send(port: proxy.port, uri: "/r/orders")
            #expect(third.status == .ok)
            #expect(resource.requests.map(\.status) == [401, 200, 200, 401, 200])
            #expect(resource.requests[3].refusal == "the nonce is not the current one")
        }
    }

    @Test func anUpstreamThatAsksForANewNonceEveryTimeIsNotLoopedOn() async throws {
        try await Self.with(nonce: .rotateEveryRequest) { proxy, resource, _ in
            let response = try await TestClient.send(port: proxy.port, uri: "/r/orders")
            #expect(response.status == .unauthorized)
            #expect(resource.requests.count == 2, "one replay, never a loop")
            #expect(resource.requests.allSatisfy { $0.error == "use_dpop_nonce" })
        }
    }

    @Test func aRequestWhoseBodyIsNotKeptIsNotReplayedForANonce() async throws {
        try await Self.with(nonce: .required) { proxy, resource, _ in
            let large = [UInt8](repeating: 0x61, count: ExchangeStateMachine.replayLimit + 1)
            let response = try await TestClient.send(
                port: proxy.port, method: "PUT", uri: "/r/blob", body: .bytes(large))
            #expect(response.status == .unauthorized)
            #expect(resource.requests.map(\.error) == ["use_dpop_nonce"])
        }
    }

    /// A client's own `DPoP` (a proof it made, or one it captured) and its `Authorization: DPoP` never reach the
    /// upstream, on a DPoP route or any other.
    @Test func aClientsOwnDPoPHeadersNeverReachTheUpstream() async throws {
        try await withDPoPAuthorizationServer { authorization in
            try await withDPoPResourceServer { resource in
                try await Self.withProxy(authorization, resource) { proxy, echo in
                    let hostile = [
                        ("DPoP", "eyJ0eXAiOiJkcG9wK2p3dCJ9.e30.c2ln"), ("Authorization", "DPoP stolen-token"),
                    ]
                    let response = try await TestClient.send(port: proxy.port, uri: "/r/x", headers: hostile)
                    #expect(response.status == .ok, "\(response.bodyText)")
                    let received = try #require(resource.requests.first)
                    #expect(received.proofs.count == 1)
                    #expect(received.proofs.first != hostile[0].1)
                    #expect(received.authorization != hostile[1].1)
                    let plain = try await TestClient.send(port: proxy.port, uri: "/plain/x", headers: hostile)
                    let echoed = try plain.echo()
                    #expect(echoed.headerValues("dpop").isEmpty)
                    #expect(echoed.headerValues("authorization").isEmpty)
                    #expect(echo.requests.count == 1)
                }
            }
        }
    }

    /// An account that gets bearer tokens presents them as before: `Bearer`, no proof.
    @Test func aBearerTokenGoesWithoutAProof() async throws {
        try await withDPoPAuthorizationServer(algorithms: []) { authorization in
            try await withUpstream({ _ in .echo }) { echo in
                let routes = #"[{ "prefix": "/r", "upstream": "\#(echo.baseURL)", "scopes": ["\#(Self.scopes)"] }]"#
                try await ProxyHarness.with(
                    routes: routes,
                    account: DPoPTokenRequestTests.Account.clientCredentials(tokenType: "auto").json(authorization),
                    environment: [DPoPTokenRequestTests.secretVariable: "s3cret"]
                ) { proxy in
                    let response = try await TestClient.send(
                        port: proxy.port, uri: "/r/x", headers: [("DPoP", "client-proof")])
                    let echoed = try response.echo()
                    #expect(echoed.header("authorization")?.hasPrefix("Bearer at-") == true)
                    #expect(echoed.headerValues("dpop").isEmpty)
                }
            }
        }
    }

    /// A route that takes DPoP tokens only refuses a bearer one with a problem, rather than send it without a proof.
    @Test func aDPoPOnlyRouteRefusesABearerToken() async throws {
        try await withDPoPAuthorizationServer(algorithms: []) { authorization in
            try await withDPoPResourceServer { resource in
                try await Self.withProxy(
                    authorization, resource, accountTokenType: "auto", routeExtra: #", "tokenType": "dpop""#
                ) { proxy, _ in
                    let response = try await TestClient.send(port: proxy.port, uri: "/r/x")
                    #expect(response.status == .internalServerError)
                    #expect(try response.problemDetail().contains("issued a bearer token"))
                    #expect(resource.requests.isEmpty)
                }
            }
        }
    }
}

/// Two `bearer-proxy serve` processes on one state directory (SPEC §7): they sign with one key, the one in the
/// state directory, so the resource server sees one thumbprint whichever process forwards.
@Suite struct DPoPTwoServesTests {
    @Test func twoServesOnOneStateDirectoryShareOneKey() async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withDPoPAuthorizationServer { authorization in
            try await withDPoPResourceServer { resource in
                let config = directory + "/routes.json"
                let account = DPoPTokenRequestTests.Account.clientCredentials(tokenType: "dpop").json(authorization)
                let route =
                    #"{ "prefix": "/r", "upstream": "\#(resource.baseURL)", "scopes": ["\#(DPoPUpstreamTests.scopes)"] }"#
                try #"{ "account": \#(account), "routes": [\#(route)] }"#.write(
                    toFile: config, atomically: true, encoding: .utf8)
                let environment = InteractiveCommandLineTests.environment(
                    state: directory + "/state", [DPoPTokenRequestTests.secretVariable: "s3cret"])
                func serve(_ body: (Int) async throws -> Void) async throws {
                    let (_, output) = try await ChildProcess.withListening(
                        ["serve", "--config", config, "--listen", "127.0.0.1:0"], environment: environment
                    ) { port, running in
                        #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                        try await body(port)
                        running.signal(SIGTERM)
                    }
                    #expect(output.status == 0, "\(output.stderr)")
                }
                try await serve { first in
                    try await serve { second in
                        for port in [first, second, first, second] {
                            let response = try await TestClient.send(port: port, uri: "/r/items")
                            #expect(response.status == .ok, "\(response.bodyText)")
                        }
                    }
                }
                let thumbprints = Set(resource.requests.compactMap { $0.accepted?.thumbprint })
                #expect(resource.requests.count == 4 && resource.requests.allSatisfy { $0.status == 200 })
                #expect(thumbprints.count == 1)
                #expect(Set(authorization.requests.compactMap { $0.accepted?.thumbprint }) == thumbprints)
            }
        }
    }
}
