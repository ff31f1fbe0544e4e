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

/// What a client sees, and what the operator sees, when the request codec refuses a request (#24 condition 4): a
/// problem+json that says what was wrong without quoting the bytes, a count by reason in `/-/metrics`, the reason in
/// the request's access-log line beside its id — and the answer arriving whole even while the client is still
/// sending (the lingering close).
@Suite("Codec refusals: answered, counted by reason, logged with the request id, never reset")
struct CodecRefusalTests {
    @Test(
        "a refused request: problem+json naming the rule, counted by reason, its access-log line says why",
        arguments: [
            ("GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\nX-A: a\r\n b\r\n\r\n", 400, "obs_fold", "obs-fold"),
            ("GET /api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}\nX-A: a\r\n\r\n", 400, "bare_lf", "LF without CR"),
            ("BREW /api/x HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n", 501, "unknown_method", "methods"),
            ("GET /api/x HTTP/1.2\r\nHost: 127.0.0.1:{P}\r\n\r\n", 505, "unsupported_version", "HTTP/1.1"),
            ("CONNECT 127.0.0.1:{P} HTTP/1.1\r\nHost: 127.0.0.1:{P}\r\n\r\n", 405, "connect", "CONNECT"),
        ])
    func refusalIsExplainedCountedAndLogged(text: String, status: Int, reason: String, detail: String) async throws {
        let store = CapturingLogHandler.Store()
        try await ProxyHarness.with(upstream: { _ in .echo }, logger: CapturingLogHandler.logger(into: store)) {
            proxy, upstream in
            let request = text.replacing("{P}", with: "\(proxy.port)")
            let response = try #require(
                try await TestClient.raw(port: proxy.port, text: request, expectedResponses: 1).first)
            #expect(Int(response.status.code) == status)
            #expect(response.header("content-type") == "application/problem+json")
            #expect(response.header("connection") == "close")
            let problem = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect((problem["detail"] as? String)?.contains(detail) == true, "\(problem)")
            let id = try #require(response.header("x-request-id"))
            #expect(upstream.requests.isEmpty)

            let metrics = try await OperationsTests.samples(port: proxy.port)
            #expect(metrics[#"bearer_proxy_requests_refused_total{reason="\#(reason)"}"#] == 1)
            let accessLog = store.all.filter { $0.hasPrefix("info request ") && $0.contains(id) }
            #expect(accessLog.count == 1 && accessLog[0].contains(reason), "the access-log line names it: \(accessLog)")
        }
    }

    @Test("a head refused while the client is still sending: the answer arrives whole, then FIN, never a reset")
    func lingeringClose() async throws {
        try await RawUpstream.withProxy { proxy, upstream in
            // A target past the 8 KiB limit is refused (414) at its 8193rd byte; the client has 4 MiB more on the
            // way. Closed outright, the proxy's kernel would answer those bytes with RST and the client could lose
            // the 414 (RFC 9112 §9.6).
            let head = Array("GET /api/\(String(repeating: "a", count: 9_000)) HTTP/1.1\r\n".utf8)
            let rest = [UInt8](repeating: UInt8(ascii: "b"), count: 4 << 20)
            let responses = try await TestClient.raw(
                port: proxy.port, pieces: [head, rest], endOfInput: true, expectedResponses: 1)
            #expect(responses.map(\.status.code) == [414])
            #expect(upstream.acceptedConnections == 0)
        }
    }

    @Test("a client that never closes after a refusal, sending all along: the lingering close still ends it")
    func lingeringIsBounded() async throws {
        try await ProxyHarness.with(upstream: { _ in .echo }) { proxy, upstream in
            // Each byte the client sends is a read the proxy handles while lingering: none may re-arm the
            // connection's timers over the lingering close's own (2 s), which would leave it open until the idle
            // limit (60 s).
            let result = try await Python.run("lingering_client.py", [String(proxy.port), "20"])
            try #require(result.status == 0, "lingering_client.py failed: \(result.stderr)")
            let outcome = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(outcome["status"] as? String == "HTTP/1.1 501 Not Implemented")
            let closedAfter = try #require(outcome["closed_after"] as? Double, "still open after 20 s: \(outcome)")
            #expect(closedAfter < 15, "closed by the lingering limit, not the idle one")
            #expect(upstream.requests.isEmpty)
        }
    }
}
