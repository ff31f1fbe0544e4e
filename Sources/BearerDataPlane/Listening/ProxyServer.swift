import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The listening proxy: accepts client connections on every listener and runs one ``ProxyConnectionHandler`` per
/// connection.
///
/// Start-up is two steps so the dev issuer can know its URL: ``bind(to:group:generations:timeouts:maximumConnections:metrics:logger:)``
/// opens the sockets (requests that arrive before step two get 503 "starting"), then the composition root installs
/// the first generation in `generations`. As a `Service`, ``run()`` waits for graceful shutdown, then stops accepting and lets
/// in-flight exchanges finish within ``ProxyTimeouts/shutdownGrace`` (SPEC §5 `serve`, §10).
public final class ProxyServer: Service, Sendable {
    /// The listeners actually bound, in the order given (port 0 becomes the kernel's choice).
    public let listeners: [Listener]
    package let logger: Logger
    package let timeouts: ProxyTimeouts
    private let channels: [any Channel]
    /// Taken out by ``shutdown()``: each helper fails a promise in its `deinit`, so they must be released while the
    /// event loops still run, not whenever the last reference to the server happens to go.
    private let quiescing: Mutex<[ServerQuiescingHelper]?>
    /// The socket files to remove once their listeners are closed.
    private let socketFiles: [UnixSocketFile]
    private let loops: [NIOLoopBound<EventLoopState>]
    private let sweeps: [RepeatedTask]

    private init(
        bound: [Acceptor.Bound], loops: [NIOLoopBound<EventLoopState>], sweeps: [RepeatedTask],
        timeouts: ProxyTimeouts, logger: Logger
    ) {
        self.listeners = bound.map(\.listener)
        self.channels = bound.map(\.channel)
        self.quiescing = Mutex(bound.map(\.quiescing))
        self.socketFiles = bound.compactMap(\.socketFile)
        self.loops = loops
        self.sweeps = sweeps
        self.timeouts = timeouts
        self.logger = logger
    }

    /// The first TCP listener's address, if the proxy has one.
    var localAddress: ListenAddress? { listeners.firstTCPAddress }

    /// Requests seen per route label, summed over the event loops (for `/-/status`).
    public func requestCounts() async -> [String: Int] {
        var totals: [String: Int] = [:]
        for state in loops {
            let counts = try? await state.eventLoop.submit { state.value.requestCounts }.get()
            for (route, count) in counts ?? [:] { totals[route, default: 0] += count }
        }
        return totals
    }

    /// Opens a listening socket for each of `listeners`; if one fails, those already open are closed again.
    ///
    /// `maximumConnections` is shared out between the listeners (each gets its part, at least one), so that
    /// together they stay inside the descriptor limit.
    package static func bind(
        to listeners: [Listener], group: MultiThreadedEventLoopGroup, generations: any GenerationSource,
        timeouts: ProxyTimeouts = ProxyTimeouts(), maximumConnections: Int? = nil,
        metrics: ProxyMetrics = ProxyMetrics(), logger: Logger
    ) async throws -> ProxyServer {
        let connectionCap =
            maximumConnections ?? ConnectionLimiter.defaultMaximum(descriptorLimit: ConnectionLimiter.descriptorLimit())
        var loops: [NIOLoopBound<EventLoopState>] = []
        var sweeps: [RepeatedTask] = []
        for loop in group.makeIterator() {
            let state = try await loop.submit {
                NIOLoopBound(
                    EventLoopState(
                        eventLoop: loop,
                        connector: HTTPVersionConnector(
                            http1: HTTP1Connector(pool: UpstreamPool(idleTimeout: timeouts.upstreamIdle)),
                            http2: HTTP2Connector(idleTimeout: timeouts.upstreamIdle, metrics: metrics))),
                    eventLoop: loop)
            }.get()
            loops.append(state)
            sweeps.append(
                loop.scheduleRepeatedTask(initialDelay: .seconds(5), delay: .seconds(5)) { _ in
                    state.value.connector.evictIdle(now: .now())
                })
        }
        let acceptor = Acceptor(
            group: group,
            core: ProxyServerCore(installed: generations, logger: logger, metrics: metrics, timeouts: timeouts),
            stateByLoop: Dictionary(uniqueKeysWithValues: loops.map { (ObjectIdentifier($0.eventLoop), $0) }),
            peerCheck: PeerUserCheck(
                generations: generations, logger: logger, refusedUser: metrics.connectionsRefused(reason: "peer_user"),
                refusedUnknown: metrics.connectionsRefused(reason: "peer_unknown")),
            maximumConnections: max(1, connectionCap / max(1, listeners.count)))
        var bound: [Acceptor.Bound] = []
        do {
            for listener in listeners { bound.append(try await acceptor.bind(listener)) }
        } catch {
            for done in bound {
                try? await done.channel.close()
                done.socketFile?.remove()
            }
            for sweep in sweeps { sweep.cancel() }
            throw error
        }
        return ProxyServer(bound: bound, loops: loops, sweeps: sweeps, timeouts: timeouts, logger: logger)
    }

    public func run() async throws {
        // Returns when the ServiceGroup begins graceful shutdown (SIGTERM/SIGINT); throws if cancelled instead.
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Stops accepting, lets in-flight exchanges finish (bounded by the grace period), closes pooled connections.
    public func shutdown() async {
        guard let helpers = self.quiescing.withLock({ $0.take() }) else { return }
        let grace = timeouts.shutdownGrace
        // Whichever comes first — every connection of every listener closed, or the grace period over — ends the wait.
        let loop = loops[0].eventLoop
        let finished = loop.flatSubmit {
            let finished = loop.makePromise(of: Void.self)
            let done = NIOLoopBoundBox(false, eventLoop: loop)
            let finish: @Sendable () -> Void = {
                guard !done.value else { return }
                done.value = true
                finished.succeed()
            }
            let drains = helpers.map { helper in
                let drained = loop.makePromise(of: Void.self)
                helper.initiateShutdown(promise: drained)
                return drained.futureResult
            }
            EventLoopFuture.andAllComplete(drains, on: loop).whenComplete { _ in finish() }
            let deadline = loop.scheduleTask(in: grace) { finish() }
            finished.futureResult.whenComplete { _ in deadline.cancel() }
            return finished.futureResult
        }
        try? await finished.get()
        // The listening sockets are closed by now (the helpers close them first); their files go with them.
        for channel in channels { try? await channel.closeFuture.get() }
        for file in socketFiles { file.remove() }
        for (sweep, state) in zip(sweeps, loops) {
            let cancelled = state.eventLoop.makePromise(of: Void.self)
            sweep.cancel(promise: cancelled)
            try? await cancelled.futureResult.get()
        }
        for state in loops {
            try? await state.eventLoop.submit { state.value.connector.closeAll() }.get()
        }
    }
}

/// What every connection handler shares: where the generation in force is found, the logger, metrics and limits.
package struct ProxyServerCore: Sendable {
    let installed: any GenerationSource
    package let logger: Logger
    package let metrics: ProxyMetrics
    /// The client side's limits (idle, request head, body stall) apply to every connection.
    package let timeouts: ProxyTimeouts

    init(installed: any GenerationSource, logger: Logger, metrics: ProxyMetrics, timeouts: ProxyTimeouts) {
        self.installed = installed
        self.logger = logger
        self.metrics = metrics
        self.timeouts = timeouts
    }
}

/// Where the data plane finds the generation in force, once per exchange. The composition root owns it — the
/// generation together with the account behind it — and replaces both in one step on reload.
package protocol GenerationSource: Sendable {
    /// The generation in force with one more exchange counted against it, or nil before the first install.
    func beginExchange() -> ProxyContext?
    /// Who may connect, by the generation in force; nil before the first install (then nobody is served anyway).
    var peerUsers: PeerUserPolicy? { get }
}
