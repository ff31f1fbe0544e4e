import NIOCore
import NIOSSL
import Synchronization
import Testing

@testable import BearerDataPlane

/// An `auto` route whose TLS server offers only `http/1.1` in ALPN (RFC 7301): the exchanges to it use HTTP/1.1's
/// connections and pool, one connection per exchange in flight, and reuse them as an `http1` route would.
@Suite("auto to an origin that picks HTTP/1.1 uses the HTTP/1.1 pool")
struct AutoHTTP1OriginTests {
    /// The fixture server's context, offering only `http/1.1`.
    static func http1OnlyContext() throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(TLSFixtures.serverCertificateFile).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: TLSFixtures.serverKeyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(key))
        configuration.applicationProtocols = ["http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }

    /// The answers the upstream holds back, released together; once released, an answer goes at once.
    final class Held: Sendable {
        private let state = Mutex<(released: Bool, continuations: [AsyncStream<String>.Continuation])>((false, []))

        func answer() -> UpstreamBehaviour {
            let (events, continuation) = AsyncStream<String>.makeStream()
            let released = state.withLock { state in
                if !state.released { state.continuations.append(continuation) }
                return state.released
            }
            if released { Self.finish(continuation) }
            return .events(events)
        }

        func release() {
            let continuations = state.withLock { state in
                state.released = true
                return state.continuations
            }
            for continuation in continuations { Self.finish(continuation) }
        }

        private static func finish(_ continuation: AsyncStream<String>.Continuation) {
            continuation.yield("data: done\n\n")
            continuation.finish()
        }
    }

    @Test("50 concurrent requests: 50 connections, all answered; 50 more are served by the pooled ones")
    func concurrentRequests() async throws {
        let held = Held()
        let upstream = try await FakeUpstream.start(tls: true, tlsContext: try Self.http1OnlyContext()) { head in
            guard head.uri.contains("/held/") else { return .respond(status: 200, text: "quick") }
            // Held until the test has seen all 50 arrive, each on a connection of its own.
            return held.answer()
        }
        do {
            try await Self.run(upstream: upstream, held: held)
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }

    private static func run(upstream: FakeUpstream, held: Held) async throws {
        let routes = HTTP2UpstreamTests.route(to: upstream.baseURL, version: "auto", tls: true)
        try await ProxyHarness.with(routes: routes, threads: 1) { proxy in
            try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<50 {
                    group.addTask { try await TestClient.send(port: proxy.port, uri: "/api/held/\(index)") }
                }
                try await upstream.waitForRequests(50)
                #expect(upstream.acceptedConnections == 50)
                held.release()
                for try await response in group {
                    #expect(response.status == .ok)
                    #expect(response.bodyText == "data: done\n\n")
                }
            }
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await TestClient.send(port: proxy.port, uri: "/api/quick/\(index)").status.code
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 50))
            #expect(upstream.acceptedConnections == 50, "the pool did not serve the second 50")
            #expect(upstream.requests.allSatisfy { $0.head.version == .http1_1 })
        }
    }
}
