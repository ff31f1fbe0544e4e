import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The listening proxy: accepts client connections and runs one ``ProxyConnectionHandler`` per connection.
///
/// Start-up is two steps so the dev issuer can know its URL: ``bind(to:group:generations:timeouts:metrics:logger:)``
/// opens the socket (requests that arrive before step two get 503 "starting"), then the composition root installs
/// the first generation in `generations`. As a `Service`, ``run()`` waits for graceful shutdown, then stops accepting and lets
/// in-flight exchanges finish within ``ProxyTimeouts/shutdownGrace`` (SPEC §5 `serve`, §10).
public final class ProxyServer: Service, Sendable {
    /// The address actually bound (port 0 in the configuration becomes the kernel's choice).
    public let localAddress: ListenAddress
    let logger: Logger
    let timeouts: ProxyTimeouts
    private let channel: any Channel
    /// Taken out by ``shutdown()``: the helper fails a promise in its `deinit`, so it must be released while the
    /// event loops still run, not whenever the last reference to the server happens to go.
    private let quiescing: Mutex<ServerQuiescingHelper?>
    private let loops: [NIOLoopBound<EventLoopState>]
    private let sweeps: [RepeatedTask]

    private init(
        localAddress: ListenAddress, channel: any Channel, quiescing: ServerQuiescingHelper,
        loops: [NIOLoopBound<EventLoopState>], sweeps: [RepeatedTask], timeouts: ProxyTimeouts, logger: Logger
    ) {
        self.localAddress = localAddress
        self.channel = channel
        self.quiescing = Mutex(quiescing)
        self.loops = loops
        self.sweeps = sweeps
        self.timeouts = timeouts
        self.logger = logger
    }

    /// Requests seen per route label, summed over the event loops (for `/-/status`).
    public func requestCounts() async -> [String: Int] {
        var totals: [String: Int] = [:]
        for state in loops {
            let counts = try? await state.eventLoop.submit { state.value.requestCounts }.get()
            for (route, count) in counts ?? [:] { totals[route, default: 0] += count }
        }
        return totals
    }

    /// Opens the listening socket on `address`.
    static func bind(
        to address: ListenAddress, group: MultiThreadedEventLoopGroup, generations: any GenerationSource,
        timeouts: ProxyTimeouts = ProxyTimeouts(), maximumConnections: Int? = nil,
        metrics: ProxyMetrics = ProxyMetrics(), logger: Logger
    ) async throws -> ProxyServer {
        let connectionCap =
            maximumConnections ?? ConnectionLimiter.defaultMaximum(descriptorLimit: ConnectionLimiter.descriptorLimit())
        let acceptErrors = metrics.acceptPaused(reason: "accept_error")
        let peerCheck = PeerUserCheck(
            generations: generations, logger: logger, refusedUser: metrics.connectionsRefused(reason: "peer_user"),
            refusedUnknown: metrics.connectionsRefused(reason: "peer_unknown"))
        var loops: [NIOLoopBound<EventLoopState>] = []
        var sweeps: [RepeatedTask] = []
        for loop in group.makeIterator() {
            let state = try await loop.submit {
                NIOLoopBound(
                    EventLoopState(eventLoop: loop, pool: UpstreamPool(idleTimeout: timeouts.upstreamIdle)),
                    eventLoop: loop)
            }.get()
            loops.append(state)
            sweeps.append(
                loop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .seconds(5)) { _ in
                    state.value.pool.evictIdle(now: .now())
                })
        }
        let stateByLoop = Dictionary(uniqueKeysWithValues: loops.map { (ObjectIdentifier($0.eventLoop), $0) })
        let quiescing = ServerQuiescingHelper(group: group)
        let core = ProxyServerCore(
            installed: generations, logger: logger, metrics: metrics, timeouts: timeouts)

        let channel = try await ServerBootstrap(group: group)
            // Room for a burst of new connections: one past the backlog has its SYN dropped and retried by the
            // client's kernel a second or more later (the kernel caps this at net.core.somaxconn).
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                    // Out of descriptors, accept fails at once: back off a second instead of spinning (#22 item 2).
                    try pipeline.addHandler(
                        AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { _ in
                            acceptErrors.increment()
                            return .seconds(1)
                        })
                    try pipeline.addHandler(ConnectionLimiter(maximum: connectionCap, metrics: metrics))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                // Another user's connection is closed before anything of it is read (#26).
                guard peerCheck.admits(channel) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    let loopState = stateByLoop[ObjectIdentifier(channel.eventLoop)]!.value
                    let pipeline = channel.pipeline.syncOperations
                    var encoder = HTTPResponseEncoder.Configuration()
                    // Framing is set explicitly per response (data-plane pitfall 3).
                    encoder.automaticallySetFramingHeaders = false
                    try pipeline.addHandler(HTTPResponseEncoder(configuration: encoder))
                    // `.forwardBytes`: after a WebSocket handshake the bytes NIO holds go to the tunnel (RFC 6455 §4.1).
                    try pipeline.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
                    try pipeline.addHandler(ProxyConnectionHandler(server: core, loop: loopState))
                }
            }
            .bind(host: address.host, port: address.port)
            .get()

        let port = channel.localAddress?.port ?? address.port
        return ProxyServer(
            localAddress: ListenAddress(host: address.host, port: port), channel: channel, quiescing: quiescing,
            loops: loops, sweeps: sweeps, timeouts: timeouts, logger: logger)
    }

    public func run() async throws {
        // Returns when the ServiceGroup begins graceful shutdown (SIGTERM/SIGINT); throws if cancelled instead.
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops accepting, lets in-flight exchanges finish (bounded by the grace period), closes pooled connections.
    public func shutdown() async {
        guard let quiescing = self.quiescing.withLock({ $0.take() }) else { return }
        let loop = channel.eventLoop
        let grace = timeouts.shutdownGrace
        // Whichever comes first — every connection closed, or the grace period over — ends the wait.
        let finished = loop.flatSubmit {
            let finished = loop.makePromise(of: Void.self)
            let done = NIOLoopBoundBox(false, eventLoop: loop)
            let finish: @Sendable () -> Void = {
                guard !done.value else { return }
                done.value = true
                finished.succeed()
            }
            let drained = loop.makePromise(of: Void.self)
            drained.futureResult.whenComplete { _ in finish() }
            let deadline = loop.scheduleTask(in: grace) { finish() }
            finished.futureResult.whenComplete { _ in deadline.cancel() }
            quiescing.initiateShutdown(promise: drained)
            return finished.futureResult
        }
        try? await finished.get()
        for (sweep, state) in zip(sweeps, loops) {
            let cancelled = state.eventLoop.makePromise(of: Void.self)
            sweep.cancel(promise: cancelled)
            try? await cancelled.futureResult.get()
        }
        for state in loops {
            try? await state.eventLoop.submit { state.value.pool.closeAll() }.get()
        }
    }
}

/// What every connection handler shares: where the generation in force is found, the logger, metrics and limits.
struct ProxyServerCore: Sendable {
    let installed: any GenerationSource
    let logger: Logger
    let metrics: ProxyMetrics
    /// The client side's limits (idle, request head, body stall) apply to every connection.
    let timeouts: ProxyTimeouts
}

/// Where the data plane finds the generation in force, once per exchange. The composition root owns it — the
/// generation together with the account behind it — and replaces both in one step on reload.
protocol GenerationSource: Sendable {
    /// The generation in force with one more exchange counted against it, or nil before the first install.
    func beginExchange() -> ProxyContext?
    /// Who may connect, by the generation in force; nil before the first install (then nobody is served anyway).
    var peerUsers: PeerUserPolicy? { get }
}
