import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 server on 127.0.0.1 (port chosen by the OS) that plays the upstream API behind the proxy.
///
/// Each request head is handed to the test's closure, which returns the `UpstreamBehaviour` to play. Keep-alive
/// and pipelining are supported (NIO's server pipeline with pipelining assistance). Optionally TLS, with the
/// fixture certificate (`TLSFixtures`; trust `TLSFixtures.caFile`). Everything it observes — requests, accepted
/// and closed connections — can be read or awaited from the test.
///
///     let upstream = try await FakeUpstream.start { head in head.uri.hasPrefix("/big") ? .download(bytes: 1 << 20, chunked: true) : .echo }
///     ... run the proxy against upstream.baseURL ...
///     try await upstream.shutdown()
final class FakeUpstream: Sendable {
    /// How many leading body bytes `RecordedRequest.bodyPrefix` keeps.
    static let recordedBodyPrefixCap = 64 * 1024

    /// Whether it speaks TLS.
    let tls: Bool
    /// The loopback address it listens on.
    let host: String
    private let server: FakeHTTPServer
    private let state: FakeUpstreamState

    /// The port the upstream listens on (127.0.0.1).
    var port: Int { self.server.port }

    private init(tls: Bool, host: String, server: FakeHTTPServer, state: FakeUpstreamState) {
        self.tls = tls
        self.host = host
        self.server = server
        self.state = state
    }

    /// Starts an upstream on 127.0.0.1:0 (or another loopback `host`: the fixture certificate names 127.0.0.1 only,
    /// so one on 127.0.0.2 presents a certificate for another name). `behaviour` is called on the connection's event
    /// loop for every request head (keep it quick and non-blocking). `port` 0 lets the OS choose; `tlsContext`, when
    /// given, is presented instead of the fixture certificate's.
    static func start(
        tls: Bool = false, host: String = "127.0.0.1", port: Int = 0, tlsContext: NIOSSLContext? = nil,
        behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour
    ) async throws -> FakeUpstream {
        let sslContext = tls ? try tlsContext ?? TLSFixtures.serverContext() : nil
        let state = FakeUpstreamState(timerLoop: MultiThreadedEventLoopGroup.singleton.any())
        let server = try await FakeHTTPServer.start(
            host: host, port: port, opened: state.connectionAccepted, closed: state.connectionClosed
        ) { channel, connectionID in
            let pipeline = channel.pipeline.syncOperations
            if let sslContext {
                try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
            try pipeline.addHandler(FakeUpstreamHandler(state: state, connectionID: connectionID, behaviour: behaviour))
        }
        return FakeUpstream(tls: tls, host: host, server: server, state: state)
    }

    /// `http://HOST:PORT` or `https://HOST:PORT` (no trailing slash).
    var baseURL: String {
        "\(self.tls ? "https" : "http")://\(self.host):\(self.port)"
    }

    /// Every request received so far, in arrival order (see `RecordedRequest` for when body fields settle).
    var requests: [RecordedRequest] {
        self.state.snapshot.requests
    }

    /// Connections accepted so far.
    var acceptedConnections: Int {
        self.state.snapshot.accepted
    }

    /// Connections closed so far (by either side).
    var closedConnections: Int {
        self.state.snapshot.closed
    }

    /// Connections accepted and not yet closed.
    var openConnections: Int {
        let snapshot = self.state.snapshot
        return snapshot.accepted - snapshot.closed
    }

    /// Waits until at least `n` connections have been closed (by either side) since start.
    func waitForClosedConnections(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .closed(n), timeout: timeout)
    }

    /// Waits until at least `n` connections have been accepted since start.
    func waitForAcceptedConnections(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: .accepted(n), timeout: timeout)
    }

    /// Waits until at least `n` request heads have arrived (`complete: true`: `n` requests have fully arrived).
    func waitForRequests(_ n: Int, complete: Bool = false, timeout: Duration = .seconds(30)) async throws {
        try await self.state.wait(for: complete ? .completedRequests(n) : .requests(n), timeout: timeout)
    }

    /// The SHA-256 (lower-case hex) of a `.download(bytes:chunked:)` body of that length.
    static func downloadSHA256(bytes: Int) -> String {
        TestPattern.sha256(length: bytes)
    }

    /// Closes every open connection (as an upstream closing idle keep-alive connections would) and keeps
    /// listening. Returns once they are closed.
    func closeOpenConnections() async {
        for channel in self.state.openChannels {
            try? await channel.close()
            try? await channel.closeFuture.get()  // its count-updating callback was registered first, so has run
        }
    }

    /// Stops listening, closes every open connection and fails pending waits. Idempotent.
    func shutdown() async throws {
        await self.server.shutdown(closing: self.state.shutDown())
    }
}
