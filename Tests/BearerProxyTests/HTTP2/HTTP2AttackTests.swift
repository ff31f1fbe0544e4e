import Foundation
import Testing

@testable import BearerDataPlane

/// HTTP/2's own attacks on real sockets, sent by python-hyper's h2 and hyperframe (Tests/python/http2_attacks.py):
/// each is refused — the stream reset or the connection ended with GOAWAY — the upstream sees none of it, and the
/// proxy serves the next client.
@Suite("HTTP/2's own attacks are refused")
struct HTTP2AttackTests {
    struct Outcome: Decodable {
        var goaway: Int?
        var resets: [String: Int]
        var statuses: [String: Int]
        var closed: Bool
        var sent_all: Bool
    }

    /// HTTP/2 error codes (RFC 9113 §7).
    static let protocolError = 0x1, flowControlError = 0x3, refusedStream = 0x7, compressionError = 0x9
    static let enhanceYourCalm = 0xb

    static func attack(_ name: String, port: Int, limit: Double = 10) async throws -> Outcome {
        let result = try await Python.run("http2_attacks.py", [String(port), name, String(limit)])
        try #require(result.status == 0, "http2_attacks.py \(name) failed: \(result.stderr)")
        return try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
    }

    /// Runs `name` against a proxy, checks `expectation` on what came back, then that the upstream saw only
    /// `upstreamRequests` requests and that a new client is still served.
    func run(
        _ name: String, upstreamRequests: ClosedRange<Int> = 0...0, _ expectation: (Outcome) -> Void
    ) async throws {
        try await ProxyHarness.with(upstream: { _ in .respond(status: 200, body: Array("fine".utf8)) }) {
            proxy, upstream in
            let outcome = try await Self.attack(name, port: proxy.port)
            expectation(outcome)
            #expect(upstreamRequests.contains(upstream.requests.count), "\(name): \(upstream.requests.count) upstream")
            let client = try await HTTP2TestClient.connect(port: proxy.port)
            let after = try await client.send(HTTP2TestClient.request("GET", "/api/after"))
            await client.close()
            #expect(after.bodyText == "fine", "\(name): the next client was not served")
        }
    }

    @Test("rapid reset (CVE-2023-44487): the connection ends with GOAWAY ENHANCE_YOUR_CALM")
    func rapidReset() async throws {
        // The streams opened before the limit may reach the upstream: at most the reset-rate limit's count.
        try await run("rapid-reset", upstreamRequests: 0...200) { outcome in
            #expect(outcome.goaway == Self.enhanceYourCalm, "\(outcome)")
            #expect(outcome.closed)
        }
    }

    @Test("a CONTINUATION flood ends the connection before the header section is buffered")
    func continuationFlood() async throws {
        try await run("continuation-flood") { outcome in
            #expect(outcome.goaway != nil && outcome.goaway != 0, "\(outcome)")
            #expect(outcome.closed)
        }
    }

    @Test("a header section over SETTINGS_MAX_HEADER_LIST_SIZE is refused, never decoded whole")
    func headerListTooLarge() async throws {
        try await run("header-list-too-large") { outcome in
            let refused =
                outcome.goaway != nil || outcome.resets["1"] != nil
                || (outcome.statuses["1"].map { $0 >= 400 } ?? false)
            #expect(refused, "\(outcome)")
            #expect(outcome.statuses["1"].map { $0 < 400 } != true)
        }
    }

    @Test(
        "SETTINGS, PING and empty DATA floods end the connection with GOAWAY ENHANCE_YOUR_CALM",
        arguments: ["settings-flood", "ping-flood", "empty-data-flood"])
    func floods(name: String) async throws {
        try await run(name) { outcome in
            #expect(outcome.goaway == Self.enhanceYourCalm, "\(name): \(outcome)")
            #expect(outcome.closed, "\(name)")
        }
    }

    @Test("a WINDOW_UPDATE past 2^31-1 is a FLOW_CONTROL_ERROR for the connection")
    func windowOverflow() async throws {
        try await run("window-overflow") { outcome in
            #expect(outcome.goaway == Self.flowControlError, "\(outcome)")
            #expect(outcome.closed)
        }
    }

    @Test("streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused; those within it are served")
    func tooManyStreams() async throws {
        try await run("too-many-streams", upstreamRequests: 0...HTTP2ClientConnection.maximumConcurrentStreams) {
            outcome in
            let beyond = (HTTP2ClientConnection.maximumConcurrentStreams..<150).map { String(1 + 2 * $0) }
            let refused = beyond.filter {
                outcome.resets[$0] == Self.refusedStream || outcome.resets[$0] == Self.protocolError
            }
            // NIOHTTP2 makes a stream past the limit a connection error (RFC 9113 §5.1.2 allows a stream error).
            #expect(refused.count == beyond.count || (outcome.goaway != nil && outcome.closed), "\(outcome)")
        }
    }
}
