import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerRuntime
@testable import BearerTokens

/// The proxy's own answers to a gRPC call, read by grpcio (Tests/python/grpc_call.py): a gRPC status in a trailers-only
/// answer, never a problem+json body that a gRPC client could only call a framing error.
@Suite("gRPC clients: the proxy's own answers are gRPC statuses")
struct GRPCRefusalTests {
    struct Outcome: Decodable {
        var code: String
        var value: Int
        var details: String
    }

    static func call(_ port: Int, _ method: String, metadata: [String] = []) async throws -> Outcome {
        let result = try await Python.run("grpc_call.py", [String(port), method] + metadata)
        try #require(result.status == 0, "grpc_call.py failed: \(result.stderr)")
        return try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
    }

    @Test("a discovered route nobody signed in for: UNAUTHENTICATED, naming the command; nothing reaches the upstream")
    func signInRequired() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let route = #"{ "prefix": "/pkg.Tasks", "upstream": "\#(upstream.baseURL)", "auth": "discover" }"#
            try await ProxyHarness.with(routes: "[\(route)]") { proxy in
                let outcome = try await Self.call(proxy.port, "/pkg.Tasks/List")
                #expect(outcome.code == "UNAUTHENTICATED")
                #expect(outcome.value == 16)
                #expect(outcome.details.contains("bearer-proxy login /pkg.Tasks"), "\(outcome.details)")
            }
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("no route: UNIMPLEMENTED; a method the route refuses: UNIMPLEMENTED")
    func noRoute() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }, route: #""methods": ["GET"]"#) { proxy, upstream in
            let missing = try await Self.call(proxy.port, "/pkg.Other/Get")
            #expect(missing.code == "UNIMPLEMENTED")
            #expect(missing.details.contains("No route"), "\(missing.details)")
            let refused = try await Self.call(proxy.port, "/api/Get")
            #expect(refused.code == "UNIMPLEMENTED")
            #expect(upstream.requests.isEmpty)
        }
    }

    @Test("an on-behalf-of route called without the caller's token: UNAUTHENTICATED saying what to send")
    func onBehalfOfWithoutSubject() async throws {
        try await withIdentityProvider { provider in
            try await withUpstream({ _ in .echo }) { upstream in
                let route =
                    #"{ "prefix": "/pkg.Tasks", "upstream": "\#(upstream.baseURL)", "auth": "on-behalf-of", "#
                    + #""scopes": ["api://down/.default"] }"#
                try await ProxyHarness.with(
                    routes: "[\(route)]", account: TestAccounts.clientSecret(provider),
                    environment: TestAccounts.environment(provider)
                ) { proxy in
                    let outcome = try await Self.call(proxy.port, "/pkg.Tasks/List")
                    #expect(outcome.code == "UNAUTHENTICATED")
                    #expect(outcome.details.contains("Authorization: Bearer"), "\(outcome.details)")
                }
                #expect(upstream.requests.isEmpty)
            }
        }
    }

    @Test("the status mapping, and grpc-message's percent-encoding (PROTOCOL-HTTP2.md)")
    func mapping() {
        #expect(ProxyError.signInRequired(detail: "x").grpcStatus == 16)
        #expect(ProxyError.consentRequired(detail: "x").grpcStatus == 7)
        #expect(ProxyError.noRoute(path: "/x").grpcStatus == 12)
        #expect(ProxyError.tokenUnavailable(detail: "x", retryAfterSeconds: 1).grpcStatus == 14)
        #expect(ProxyError.upstreamTimeout(upstream: "u", seconds: 1).grpcStatus == 4)
        #expect(ProxyError.tokenMisconfigured(detail: "x").grpcStatus == 13)
        #expect(GRPCMessage.encode("a b%c\né") == "a b%25c%0A%C3%A9")
        #expect(LocalResponse.isGRPC(contentTypes: ["application/grpc"]))
        #expect(LocalResponse.isGRPC(contentTypes: ["Application/gRPC+proto"]))
        #expect(!LocalResponse.isGRPC(contentTypes: ["application/grpc-web"]))
        #expect(!LocalResponse.isGRPC(contentTypes: ["application/grpc", "application/grpc"]))
        let answer = LocalResponse.grpcProblem(.signInRequired(detail: "Not signed in."), requestID: "r1")
        #expect(answer.status == .ok)
        #expect(answer.body.readableBytes == 0)
        #expect(answer.headers["grpc-status"] == ["16"])
        #expect(answer.headers["content-type"] == ["application/grpc"])
    }
}
