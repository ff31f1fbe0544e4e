import NIOCore
import NIOExtras

/// A WebSocket connection after `101 Switching Protocols` (SPEC §8): the client's connection and the upstream's
/// joined into one byte tunnel. Confined to the client connection's event loop, which also runs the upstream
/// connection (SPEC §3), so the two ends call each other directly.
///
/// - Backpressure both ways: an end reads only while the other can take what it reads (NIO's glue pattern).
/// - Half-close: an end that stops sending (FIN) stops the other end's output too; the tunnel ends when both
///   connections have closed.
/// - An idle limit: no byte either way for ``idleLimit`` closes both.
/// - When it ends, ``finished`` is told once (the access-log line and the metrics, with the bytes each way).
final class Tunnel {
    weak var client: TunnelHandler?
    weak var upstream: TunnelHandler?
    let idleLimit: TimeAmount
    private(set) var bytesFromClient = 0
    private(set) var bytesFromUpstream = 0
    private var lastActivity: NIODeadline
    private var openEnds = 2
    private var timer: Scheduled<Void>?
    private var finished: ((Tunnel) -> Void)?

    init(idleLimit: TimeAmount, now: NIODeadline, finished: @escaping (Tunnel) -> Void) {
        self.idleLimit = idleLimit
        self.lastActivity = now
        self.finished = finished
    }

    /// Joins `client` and `upstream` (just added to their pipelines) and starts the idle limit on `loop`.
    static func join(
        idleLimit: TimeAmount, loop: any EventLoop, finished: @escaping (Tunnel) -> Void
    ) -> (client: TunnelHandler, upstream: TunnelHandler) {
        let tunnel = Tunnel(idleLimit: idleLimit, now: loop.now, finished: finished)
        let client = TunnelHandler(tunnel: tunnel, side: .client)
        let upstream = TunnelHandler(tunnel: tunnel, side: .upstream)
        tunnel.client = client
        tunnel.upstream = upstream
        tunnel.armIdleTimer(on: loop)
        return (client, upstream)
    }

    func partner(of side: TunnelHandler.Side) -> TunnelHandler? {
        switch side {
        case .client: upstream
        case .upstream: client
        }
    }

    func transferred(_ bytes: Int, from side: TunnelHandler.Side, now: NIODeadline) {
        switch side {
        case .client: bytesFromClient += bytes
        case .upstream: bytesFromUpstream += bytes
        }
        lastActivity = now
    }

    /// One end's connection closed; the tunnel is over when both have.
    func closed(_ side: TunnelHandler.Side) {
        openEnds -= 1
        partner(of: side)?.closeFully()
        guard openEnds == 0 else { return }
        timer?.cancel()
        timer = nil
        let finished = self.finished
        self.finished = nil
        finished?(self)
    }

    private func armIdleTimer(on loop: any EventLoop) {
        timer = loop.assumeIsolated().scheduleTask(deadline: lastActivity + idleLimit) { [weak self] in
            guard let self else { return }
            if loop.now >= self.lastActivity + self.idleLimit {
                self.client?.closeFully()
                self.upstream?.closeFully()
            } else {
                self.armIdleTimer(on: loop)
            }
        }
    }
}

/// One end of a ``Tunnel``: what it reads goes to the other end's connection as it is.
final class TunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Side {
        case client
        case upstream
    }

    let tunnel: Tunnel
    let side: Side
    private var context: ChannelHandlerContext?
    private var readPending = false

    init(tunnel: Tunnel, side: Side) {
        self.tunnel = tunnel
        self.side = side
    }

    private var partner: TunnelHandler? { tunnel.partner(of: side) }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        tunnel.transferred(buffer.readableBytes, from: side, now: context.eventLoop.now)
        partner?.send(buffer)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tunnel.closed(side)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            partner?.finishSending()
        } else if event is ChannelShouldQuiesceEvent {
            // Graceful shutdown: a tunnel has no exchange boundary to wait for; WebSocket clients reconnect.
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.resumeReading() }
    }

    func read(context: ChannelHandlerContext) {
        if partner?.isWritable ?? false {
            context.read()
        } else {
            readPending = true
        }
    }

    // MARK: Called by the other end

    fileprivate var isWritable: Bool { context?.channel.isWritable ?? false }

    fileprivate func send(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    fileprivate func flush() { context?.flush() }

    fileprivate func resumeReading() {
        guard readPending, let context else { return }
        readPending = false
        context.read()
    }

    /// The other end stopped sending: so does this one (TCP half-close, RFC 9293 §3.6); where the connection cannot
    /// half-close (TLS), it closes.
    fileprivate func finishSending() {
        guard let context else { return }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenFailure { [weak self] _ in self?.closeFully() }
        context.close(mode: .output, promise: promise)
    }

    func closeFully() {
        context?.close(promise: nil)
    }
}
