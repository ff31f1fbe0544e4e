import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Metrics
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the proxy inside its file-descriptor limit (docs/operations.md, "Out of file descriptors"), on the listening
/// channel.
///
/// Out of descriptors, `accept4` fails with `EMFILE` at once and the listener used to retry at once, spinning a core
/// until the process died (libdispatch, unable to open `/proc/<tid>/stat` either, trapped with SIGILL). Two guards:
///
/// - **A cap on client connections** (`serve --max-connections`, by default derived from `RLIMIT_NOFILE`: half of
///   what remains after a reserve, since each client connection may hold an upstream connection too). At the cap
///   the listener stops accepting: new clients wait in the kernel's backlog — they are not refused — and accepting
///   resumes as soon as a connection closes. The reserve keeps descriptors for the token cache file and its lock,
///   identity-provider calls, `/-/health` and logging. On reaching the cap, every idle keep-alive connection is
///   asked to close (``RoomWanted``), as nginx drains its reusable connections: clients that hold connections open
///   and send nothing — 1,000 idle keep-alives, a slowloris between requests — cannot keep a health probe or a new
///   client out until their idle limit.
/// - **A back-off on accept errors** (NIO's `AcceptBackoffHandler`): an `EMFILE`/`ENFILE` that happens anyway
///   (descriptors used elsewhere) pauses accepting for a second instead of spinning.
///
/// `bearer_proxy_accept_paused_total{reason="connection_limit"|"accept_error"}` counts both; docs/operations.md.
final class ConnectionLimiter: ChannelDuplexHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = Never

    /// Descriptors kept out of the cap's reach: the token cache file, its lock and its temporary file, the dev
    /// issuer's key, identity-provider connections, the event loops' own descriptors, logging.
    static let reservedDescriptors = 64

    /// The cap for a process whose soft `RLIMIT_NOFILE` is `limit`: half of what the reserve leaves (a client
    /// connection and its upstream connection), at least 8.
    static func defaultMaximum(descriptorLimit limit: Int) -> Int {
        max(8, (limit - reservedDescriptors) / 2)
    }

    /// The soft `RLIMIT_NOFILE` of this process (a large number when unlimited).
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        // RLIM_INFINITY is all ones; anything past 2^30 is as good as unlimited here.
        return limit.rlim_cur > 1 << 30 ? 1 << 30 : Int(limit.rlim_cur)
    }

    /// Sent to every open client connection when the cap is reached: those idle between requests close.
    struct RoomWanted: Sendable {

        init() {}
    }

    let maximum: Int
    private let pausedAtLimit: Metrics.Counter
    private var open = 0
    private var readPending = false
    /// The open client connections, to ask for room at the cap.
    private var children: [ObjectIdentifier: any Channel] = [:]

    init(maximum: Int, metrics: ProxyMetrics) {
        self.maximum = max(1, maximum)
        self.pausedAtLimit = metrics.acceptPaused(reason: "connection_limit")
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        open += 1
        let key = ObjectIdentifier(child)
        children[key] = child
        // Counted down on this (the listener's) event loop, whichever loop the connection lives on.
        child.closeFuture.hop(to: context.eventLoop).assumeIsolated().whenComplete { [self] _ in
            self.open -= 1
            self.children.removeValue(forKey: key)
            if self.readPending && self.open < self.maximum {
                self.readPending = false
                context.read()
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        guard open < maximum else {
            if !readPending {
                pausedAtLimit.increment()
                // Each connection decides on its own loop; those idle close, and their close resumes accepting.
                for child in children.values { child.pipeline.fireUserInboundEventTriggered(RoomWanted()) }
            }
            readPending = true
            return
        }
        context.read()
    }
}
