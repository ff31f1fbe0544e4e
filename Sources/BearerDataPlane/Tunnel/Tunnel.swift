import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOExtras

/// A WebSocket connection after `101 Switching Protocols` (SPEC §8): the client's connection and the upstream's
/// joined into one byte tunnel. Confined to the client connection's event loop, which also runs the upstream
/// connection (SPEC §3), so the two ends call each other directly.
///
/// Every decision is ``TunnelStateMachine``'s; this class holds the two ends and the idle check, and performs the
/// machine's actions. Backpressure both ways: an end reads only while the other can take what it reads
/// (``ReadGate``). When the tunnel ends, ``finished`` is told once (the access-log line and the metrics, with the
/// bytes each way).
final class Tunnel {
    package weak var client: TunnelHandler?
    package weak var upstream: TunnelHandler?
    private(set) var machine: TunnelStateMachine
    private var timer: Scheduled<Void>?
    private let loop: any EventLoop
    private var finished: ((Tunnel) -> Void)?

    var bytesFromClient: Int { machine.bytesFromClient }
    var bytesFromUpstream: Int { machine.bytesFromUpstream }

    init(idleLimit: TimeAmount, loop: any EventLoop, finished: @escaping (Tunnel) -> Void) {
        self.machine = TunnelStateMachine(idleLimit: idleLimit, now: loop.now)
        self.loop = loop
        self.finished = finished
    }

    /// Joins `client` and `upstream` (just added to their pipelines) and starts the idle check on `loop`.
    static func join(
        idleLimit: TimeAmount, loop: any EventLoop, finished: @escaping (Tunnel) -> Void
    ) -> (client: TunnelHandler, upstream: TunnelHandler) {
        let tunnel = Tunnel(idleLimit: idleLimit, loop: loop, finished: finished)
        let client = TunnelHandler(tunnel: tunnel, side: .client)
        let upstream = TunnelHandler(tunnel: tunnel, side: .upstream)
        tunnel.client = client
        tunnel.upstream = upstream
        tunnel.run(.armIdleCheck(tunnel.machine.firstIdleCheck))
        return (client, upstream)
    }

    func end(_ side: TunnelStateMachine.Side) -> TunnelHandler? {
        switch side {
        case .client: client
        case .upstream: upstream
        }
    }

    // MARK: Events, from the ends

    func received(_ bytes: Int, from side: TunnelStateMachine.Side) {
        run(machine.received(bytes, from: side, now: loop.now))
    }

    func inputClosed(_ side: TunnelStateMachine.Side) { run(machine.inputClosed(side)) }
    func finishSendingFailed(_ side: TunnelStateMachine.Side) { run(machine.finishSendingFailed(side)) }
    func connectionClosed(_ side: TunnelStateMachine.Side) { run(machine.connectionClosed(side)) }
    func closeNow() { run(machine.closeNow()) }

    // MARK: Actions

    private func run(_ action: TunnelStateMachine.Action) {
        switch action {
        case .none:
            break
        case .finishSending(let side):
            end(side)?.finishSending()
        case .close(let side):
            end(side)?.closeFully()
        case .closeBoth:
            client?.closeFully()
            upstream?.closeFully()
        case .armIdleCheck(let deadline):
            timer = loop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
                guard let self else { return }
                self.run(self.machine.idleCheck(now: self.loop.now))
            }
        case .report:
            timer?.cancel()
            timer = nil
            let finished = self.finished
            self.finished = nil
            finished?(self)
        }
    }
}

/// One end of a ``Tunnel``: what it reads goes to the other end's connection as it is.
final class TunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    typealias Side = TunnelStateMachine.Side

    let tunnel: Tunnel
    let side: Side
    private var context: ChannelHandlerContext?
    private var reads = ReadGate()

    init(tunnel: Tunnel, side: Side) {
        self.tunnel = tunnel
        self.side = side
    }

    private var partner: TunnelHandler? { tunnel.end(side.other) }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        tunnel.received(buffer.readableBytes, from: side)
        partner?.send(buffer)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tunnel.connectionClosed(side)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            tunnel.inputClosed(side)
        } else if event is ChannelShouldQuiesceEvent {
            tunnel.closeNow()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        tunnel.closeNow()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.resumeReading() }
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit(open: partner?.isWritable ?? false) { context.read() }
    }

    // MARK: Called by the other end

    fileprivate var isWritable: Bool { context?.channel.isWritable ?? false }

    fileprivate func send(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    fileprivate func flush() { context?.flush() }

    fileprivate func resumeReading() {
        guard let context, reads.release(open: true) else { return }
        context.read()
    }

    // MARK: Called by the tunnel

    /// Stops this connection's output (TCP half-close, RFC 9293 §3.6); the tunnel hears when it cannot (TLS).
    func finishSending() {
        guard let context else { return }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenFailure { [weak self] _ in
            guard let self else { return }
            self.tunnel.finishSendingFailed(self.side)
        }
        context.close(mode: .output, promise: promise)
    }

    func closeFully() {
        context?.close(promise: nil)
    }
}
