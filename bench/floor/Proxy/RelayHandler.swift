import NIOCore

/// One side of the floor's relay — the client's connection or the upstream's, on either codec — and what the other
/// side, on the same event loop, asks of it: whether it can take more, the parts it writes, a flush at the end of a
/// read burst, and to hold back or let through reads while the other side cannot take more (data-plane pitfall 7).
/// The four handlers differ only in how they read and rewrite messages; this is the rest of them, once.
protocol RelayHandler: ChannelDuplexHandler {
    associatedtype Peer: RelayHandler
    /// The side it relays to, once connected.
    var peer: Peer? { get }
    var context: ChannelHandlerContext? { get set }
    var gate: ReadGate { get set }
}

extension RelayHandler {
    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        peer?.flush()
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        peer?.setPaused(!context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// A message its decoder refused: no answer, the connection goes (the floor measures the good path).
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        gate.read(context)
    }

    // MARK: called by the other side

    var isWritable: Bool { context?.channel.isWritable ?? false }

    func send(_ part: OutboundOut) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() {
        context?.flush()
    }

    func setPaused(_ paused: Bool) {
        if let context { gate.set(paused: paused, context) }
    }
}
