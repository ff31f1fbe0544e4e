import AsyncHTTPClient
import Foundation
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

/// What a user reads when TLS to an upstream or an identity provider fails (issue #27): what happened and what to
/// do, never BoringSSL's error stack with the library's build path in it.
@Suite("TLS failures say what happened and what to do, with no library dump")
struct UpstreamTLSFailureTests {
    /// What a library's own description of a TLS error carries, and a problem body must not: a source path, a
    /// checkout folder, BoringSSL's packed error string, the Swift error types' names.
    static let dumpMarkers = [
        ".build", "checkouts", ".cc:", ".swift", "OPENSSL_internal", "error:", "sslError", "handshakeFailed",
        "BoringSSL", "NIOSSL", "Error: ",
    ]

    static func leaks(_ text: String) -> [String] { dumpMarkers.filter { text.contains($0) } }

    @Test(
        "an https upstream that cannot be trusted gets a 502 that says why, and never the token",
        arguments: [
            // The fixture CA is not in the system's trust store: no caFile, no trust.
            ("untrusted certificate", "127.0.0.1", true, false, ["not trusted", #""tls": {"caFile""#]),
            // A trusted certificate for 127.0.0.1 presented on 127.0.0.2.
            ("certificate for another name", "127.0.0.2", true, true, ["does not name the host"]),
            // A plain-HTTP server behind an https upstream URL.
            ("not TLS at all", "127.0.0.1", false, true, ["did not answer in TLS", "http://"]),
        ])
    func upstreamTLSFailure(
        name: String, host: String, upstreamTLS: Bool, trustCA: Bool, expected: [String]
    ) async throws {
        try await withUpstream(tls: upstreamTLS, host: host, { _ in .echo }) { upstream in
            let tls = trustCA ? #", "tls": { "caFile": "\#(TLSFixtures.caFile)" }"# : ""
            let routes = """
                [ { "prefix": "/api", "upstream": "https://\(host):\(upstream.port)/base", "scopes": ["api://t/Read"]\(tls) } ]
                """
            try await ProxyHarness.with(routes: routes) { proxy in
                let response = try await TestClient.send(port: proxy.port, uri: "/api/me")
                #expect(response.status == .badGateway, "\(name): \(response.bodyText)")
                #expect(response.header("content-type") == "application/problem+json")
                let problem = try response.jsonObject()
                let detail = problem["detail"] as? String ?? ""
                #expect(problem["title"] as? String == "Upstream unreachable", "\(name)")
                for words in expected { #expect(detail.contains(words), "\(name): \(detail)") }
                #expect(Self.leaks(response.bodyText).isEmpty, "\(name) leaks \(Self.leaks(response.bodyText))")
                // The request never reached the upstream: no token crossed an unverified connection.
                #expect(upstream.requests.isEmpty, "\(name)")
            }
        }
    }

    @Test("an identity provider behind an untrusted certificate is named with what to do; the global caFile trusts it")
    func identityProviderTLS() async throws {
        try await withUpstream(tls: true, { _ in .respond(status: 200, body: Array("{}".utf8)) }) { provider in
            let url = provider.baseURL + "/token"
            let untrusting = IdentityProviderClient(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger)
            let trusting = IdentityProviderClient(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: ProxyHarness.silentLogger,
                caFile: TLSFixtures.caFile)
            do {
                do {
                    _ = try await untrusting.send(HTTPClientRequest(url: url))
                    Issue.record("an untrusted identity provider was reached")
                } catch {
                    guard case .providerUnavailable(let reason, _)? = error as? TokenError else {
                        Issue.record("unexpected \(error)")
                        throw error
                    }
                    #expect(reason.contains("cannot reach 127.0.0.1: its TLS certificate is not trusted"), "\(reason)")
                    #expect(reason.contains(#""tls": {"caFile""#), "\(reason)")
                    #expect(Self.leaks(reason).isEmpty, "leaks \(Self.leaks(reason)): \(reason)")
                }
                let (status, _, _) = try await trusting.send(HTTPClientRequest(url: url))
                #expect(status == 200)
            } catch {
                try? await untrusting.shutdown()
                try? await trusting.shutdown()
                throw error
            }
            try await untrusting.shutdown()
            try await trusting.shutdown()
        }
    }

    @Test(
        "BoringSSL's reason code is read from its packed error string, and nothing else of it",
        arguments: [
            (
                "Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at "
                    + "/src/.build/checkouts/swift-nio-ssl/Sources/CNIOBoringSSL/ssl/handshake.cc:320",
                "CERTIFICATE_VERIFY_FAILED"
            ),
            (
                "Error: 1 error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at x.cc:1",
                "WRONG_VERSION_NUMBER"
            ),
            ("Error: 1 error:1:SSL routines:OPENSSL_internal:/etc/passwd at x.cc:1", nil),
            ("no packed error here", nil),
        ])
    func reasonCode(entry: String, expected: String?) {
        #expect(ConnectionFailure.reasonCode(in: entry) == expected)
    }
}
