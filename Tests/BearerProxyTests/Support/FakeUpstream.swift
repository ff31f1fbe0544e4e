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
///     defer { Task { try? await upstream.shutdown() } } // or: try await upstream.shutdown() at the end
final class FakeUpstream: Sendable {
    /// How many leading body bytes `RecordedRequest.bodyPrefix` keeps.
    static let recordedBodyPrefixCap = 64 * 1024

    /// The port the upstream listens on (127.0.0.1).
    let port: Int
    /// Whether it speaks TLS.
    let tls: Bool
    private let serverChannel: any Channel
    private let state: FakeUpstreamState

    private init(port: Int, tls: Bool, serverChannel: any Channel, state: FakeUpstreamState) {
        self.port = port
        self.tls = tls
        self.serverChannel = serverChannel
        self.state = state
    }

    /// Starts an upstream on 127.0.0.1:0. `behaviour` is called on the connection's event loop for every request
    /// head (keep it quick and non-blocking).
    static func start(
        tls: Bool = false,
        behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour
    ) async throws -> FakeUpstream {
        let sslContext = tls ? try TLSFixtures.serverContext() : nil
        let group = MultiThreadedEventLoopGroup.singleton
        let state = FakeUpstreamState(timerLoop: group.any())
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let connectionID = state.connectionAccepted(channel) else {
                        channel.close(promise: nil)  // accepted while shutting down
                        return
                    }
                    channel.closeFuture.whenComplete { _ in state.connectionClosed(connectionID) }
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    try pipeline.addHandler(
                        FakeUpstreamHandler(state: state, connectionID: connectionID, behaviour: behaviour))
                }
            }
        let serverChannel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let port = serverChannel.localAddress?.port else {
            try? await serverChannel.close()
            throw TestSupportError.shutDown
        }
        return FakeUpstream(port: port, tls: tls, serverChannel: serverChannel, state: state)
    }

    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT` (no trailing slash).
    var baseURL: String {
        "\(self.tls ? "https" : "http")://127.0.0.1:\(self.port)"
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
        let channels = self.state.shutDown()
        try? await self.serverChannel.close()
        for channel in channels {
            try? await channel.close()
            try? await channel.closeFuture.get()
        }
    }
}
