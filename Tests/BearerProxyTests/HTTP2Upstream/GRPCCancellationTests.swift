import Foundation
import NIOCore
import NIOHTTP2
import Testing

@testable import BearerDataPlane

/// A gRPC call that ends early, either way, with grpcio (Tests/python/grpc_ends.py) through the proxy: a client that
/// cancels or whose deadline passes lets go of the upstream's side of the call too (an h2 upstream's stream reset,
/// an HTTP/1.1 upstream's connection closed); an upstream that resets the stream gives the client an error, never a
/// hang or a success.
@Suite("gRPC calls that end early: cancellation and deadlines both ways")
struct GRPCCancellationTests {
    struct Outcome: Decodable {
        var answers: [String]
        var code: String
        var details: String
        var server: String
    }

    static func ends(_ arguments: [String]) async throws -> Outcome {
        let result = try await Python.run("grpc_ends.py", arguments)
        try #require(result.status == 0, "grpc_ends.py failed: \(result.stderr)")
        return try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
    }

    /// Runs `body` with grpc_echo_server.py and a proxy routing `/pkg.Echo` to it over h2.
    static func withEchoServer(_ body: (_ proxyPort: Int, _ serverPort: Int) async throws -> Void) async throws {
        let script = CommandLineTests.repositoryRoot + "/Tests/python/grpc_echo_server.py"
        _ = try await ChildProcess.withListening(executable: "/usr/bin/env", ["python3", script]) { port, running in
            defer { running.signal(SIGKILL) }
            let route =
                #"{ "prefix": "/pkg.Echo", "upstream": "http://127.0.0.1:\#(port)", "#
                + #""scopes": ["api://echo/.default"], "upstreamProtocol": "h2" }"#
            try await ProxyHarness.with(routes: "[\(route)]") { proxy in
                try await body(proxy.port, port)
            }
        }
    }

    @Test("the client cancels a streaming call: the grpcio server behind an h2 route sees its call end")
    func clientCancelsH2() async throws {
        try await Self.withEchoServer { proxyPort, serverPort in
            let outcome = try await Self.ends(["cancel", String(proxyPort), "pkg.Echo", String(serverPort)])
            #expect(outcome.answers == ["ready"])
            #expect(outcome.code == "CANCELLED")
            // The server's handler waits for its call to end and nothing else: `ended` is the reset reaching it.
            #expect(outcome.server == "ended")
        }
    }

    @Test("a grpcio deadline passes while the server sleeps on it: DEADLINE_EXCEEDED, the server's call ended too")
    func deadlineH2() async throws {
        try await Self.withEchoServer { proxyPort, serverPort in
            let outcome = try await Self.ends(["deadline", String(proxyPort), "pkg.Echo", String(serverPort), "300"])
            #expect(outcome.code == "DEADLINE_EXCEEDED")
            #expect(outcome.server == "ended")
        }
    }

    @Test("the client cancels a streaming call to an HTTP/1.1 upstream: that connection is closed")
    func clientCancelsHTTP1() async throws {
        let (messages, writer) = AsyncStream<String>.makeStream()
        writer.yield("\u{0}\u{0}\u{0}\u{0}\u{5}ready")
        // The response stays open after its first message: only the client's cancel can end the exchange.
        try await ProxyHarness.with(upstream: { _ in .events(messages, contentType: "application/grpc") }) {
            proxy, upstream in
            let outcome = try await Self.ends(["cancel", String(proxy.port), "api/pkg.Echo", "-"])
            #expect(outcome.answers == ["ready"])
            #expect(outcome.code == "CANCELLED")
            try await upstream.waitForClosedConnections(1)
            writer.finish()
        }
    }

    @Test("the h2 upstream resets the stream before answering: the client gets UNAVAILABLE from the proxy")
    func upstreamResetsBeforeHead() async throws {
        try await Self.withFakeH2 { _ in
            .reset(.internalError)
        } body: { proxyPort in
            let outcome = try await Self.ends(["stream", String(proxyPort), "pkg.Echo"])
            #expect(outcome.answers.isEmpty)
            #expect(outcome.code == "UNAVAILABLE")
        }
    }

    @Test("the h2 upstream resets the stream mid-answer: the client's call fails, neither a hang nor a success")
    func upstreamResetsMidStream() async throws {
        let message = ByteBuffer(bytes: [0, 0, 0, 0, 5] + Array("ready".utf8))
        try await Self.withFakeH2 { _ in
            .respondThenReset(
                status: 200, fields: [("content-type", "application/grpc")], body: message, .internalError)
        } body: { proxyPort in
            let outcome = try await Self.ends(["stream", String(proxyPort), "pkg.Echo"])
            // Not a success, and not the client's own deadline (60 s): the reset reached it as a failed call. (The
            // message before the reset may or may not come first: the client's stream is reset as soon as the
            // upstream's is, and what was not yet written to it goes with it.)
            #expect(outcome.code != "OK", "\(outcome)")
            #expect(outcome.code != "DEADLINE_EXCEEDED", "\(outcome)")
            #expect(outcome.answers.count <= 1)
        }
    }

    static func withFakeH2(
        answer: @escaping @Sendable (FakeHTTP2Upstream.Request) -> FakeHTTP2Upstream.Answer,
        body: (_ proxyPort: Int) async throws -> Void
    ) async throws {
        let upstream = try await FakeHTTP2Upstream.start(answer: answer)
        do {
            let route =
                #"[{ "prefix": "/pkg.Echo", "upstream": "\#(upstream.baseURL)", "scopes": ["api://echo/.default"], "#
                + #""upstreamProtocol": "h2" }]"#
            try await ProxyHarness.with(routes: route) { proxy in try await body(proxy.port) }
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }
}
