import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens ``ProxyServer``'s listeners, and what they all share: the checks before an accepted connection is served
/// (``PeerUserCheck``) and its pipeline. TCP and Unix-domain listeners differ only in their socket options and, for
/// a socket file, its preparation and modes (``UnixSocketFile``).
package struct Acceptor: Sendable {
    /// One listening socket, bound.
    package struct Bound {
        package var listener: Listener
        var channel: any Channel
        var quiescing: ServerQuiescingHelper
        var socketFile: UnixSocketFile?
    }

    /// Why a listener could not be opened, naming it.
    package struct Failure: Error, CustomStringConvertible {
        package let listener: Listener
        package let reason: String
        package var description: String { "cannot listen on \(listener): \(reason)" }

        package init(listener: Listener, reason: String) {
            self.listener = listener
            self.reason = reason
        }
    }

    package let group: MultiThreadedEventLoopGroup
    let core: ProxyServerCore
    let stateByLoop: [ObjectIdentifier: NIOLoopBound<EventLoopState>]
    let peerCheck: PeerUserCheck
    let maximumConnections: Int

    package func bind(_ listener: Listener) async throws -> Bound {
        let quiescing = ServerQuiescingHelper(group: group)
        let acceptErrors = core.metrics.acceptPaused(reason: "accept_error")
        let (cap, metrics) = (maximumConnections, core.metrics)
        var bootstrap = ServerBootstrap(group: group)
            // Room for a burst of new connections: one past the backlog has its SYN dropped and retried by the
            // client's kernel a second or more later (the kernel caps this at net.core.somaxconn).
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                    // Out of descriptors, accept fails at once: back off a second instead of spinning
                    // (docs/operations.md).
                    try pipeline.addHandler(
                        AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { _ in
                            acceptErrors.increment()
                            return .seconds(1)
                        })
                    try pipeline.addHandler(ConnectionLimiter(maximum: cap, metrics: metrics))
                }
            }
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                // Another user's connection is closed before anything of it is read (SPEC §9).
                peerCheck.admits(channel).flatMap { admitted in
                    guard admitted else { return channel.close() }
                    return channel.eventLoop.makeCompletedFuture { try addHandlers(to: channel) }
                }
            }
        let channel: any Channel
        switch listener {
        case .tcp(let address):
            bootstrap = bootstrap.serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            do {
                channel = try await bootstrap.bind(host: address.host, port: address.port).get()
            } catch {
                throw Failure(listener: listener, reason: "\(error)")
            }
            let port = channel.localAddress?.port ?? address.port
            return Bound(
                listener: .tcp(ListenAddress(host: address.host, port: port)), channel: channel,
                quiescing: quiescing)
        case .unix(let path):
            do {
                try UnixSocketFile.prepare(path)
                let descriptor = try UnixSocketFile.bindSocket(path)
                do {
                    channel = try await bootstrap.withBoundSocket(descriptor).get()
                } catch {
                    unlink(path.path)
                    throw error
                }
                // NIO listens on a socket handed over with its default backlog (128); the same room as TCP's.
                _ = listen(descriptor, 1024)
            } catch {
                throw Failure(listener: listener, reason: "\(error)")
            }
            let socketFile: UnixSocketFile
            do {
                socketFile = try UnixSocketFile.bound(path)
            } catch {
                try? await channel.close()
                unlink(path.path)
                throw Failure(listener: listener, reason: "\(error)")
            }
            return Bound(listener: listener, channel: channel, quiescing: quiescing, socketFile: socketFile)
        }
    }

    /// The request codec's limits: the policy's target length and field count (``SafetyPolicy``), and room for a
    /// whole head around its bytes of names and values — the request line, and a colon, a space and a CRLF per
    /// field — so that the guard, which counts those bytes, is the one that decides near their limit.
    static let headLimits: HeadLimits = {
        let policy = SafetyPolicy()
        return HeadLimits(
            headBytes: policy.maximumHeaderBytes + policy.maximumURILength + 4 * (policy.maximumHeaderCount + 1) + 64,
            targetBytes: policy.maximumURILength, fields: policy.maximumHeaderCount)
    }()

    /// The pipeline of an admitted connection.
    private func addHandlers(to channel: any Channel) throws {
        let loopState = stateByLoop[ObjectIdentifier(channel.eventLoop)]!
        let pipeline = channel.pipeline.syncOperations
        // One handler serves HTTP/1.1: it decodes the client's bytes and frames its answers itself
        // (``RequestDecoder``, ``MessageFramer``; data-plane pitfall 3: framing set explicitly per response). In front
        // of it until the first bytes arrive, the detector that hands an HTTP/2 connection to NIOHTTP2 instead.
        let http1 = ProxyConnectionHandler(server: core, loop: loopState.value)
        let http2 = HTTP2ClientConnection(core: core, loop: loopState)
        try pipeline.addHandler(HTTP2PrefaceDetector(http1: http1, http2: http2))
        try pipeline.addHandler(http1)
    }

    package init(
        group: MultiThreadedEventLoopGroup, core: ProxyServerCore,
        stateByLoop: [ObjectIdentifier: NIOLoopBound<EventLoopState>], peerCheck: PeerUserCheck, maximumConnections: Int
    ) {
        self.group = group
        self.core = core
        self.stateByLoop = stateByLoop
        self.peerCheck = peerCheck
        self.maximumConnections = maximumConnections
    }
}
