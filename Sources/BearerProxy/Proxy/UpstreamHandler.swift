import NIOCore
import NIOHTTP1

/// The receiving side of an exchange's upstream events; implemented by ``ProxyConnectionHandler``.
protocol UpstreamHandlerOwner: AnyObject {
    func upstream(_ upstream: UpstreamHandler, received part: HTTPClientResponsePart)
    func upstreamReadComplete(_ upstream: UpstreamHandler)
    func upstreamWritabilityChanged(_ upstream: UpstreamHandler)
    func upstreamClosed(_ upstream: UpstreamHandler, error: (any Error)?)
}

/// The last handler of an upstream connection's pipeline: hands responses to the exchange that owns the connection
/// and applies backpressure by withholding `read()` while the downstream client cannot keep up.
final class UpstreamHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    let origin: UpstreamOrigin
    /// Whether the upstream has sent any byte since the current exchange took the connection.
    let watch: ResponseByteWatch
    /// The exchange using this connection; nil while it sits in the pool.
    weak var owner: (any UpstreamHandlerOwner)?
    /// Called when the connection closes while pooled, so the pool forgets it.
    var onIdleClose: ((UpstreamHandler) -> Void)?
    var idleSince = NIODeadline.now()
    /// Whether this connection served an earlier exchange (then a failure before any answer may just mean the
    /// upstream closed it while it was idle).
    var wasReused = false

    private var context: ChannelHandlerContext?
    private var readsPaused = false
    private var reads = ReadGate()

    init(origin: UpstreamOrigin, watch: ResponseByteWatch) {
        self.origin = origin
        self.watch = watch
    }

    var channel: (any Channel)? { context?.channel }
    var isActive: Bool { context?.channel.isActive ?? false }
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func write(_ part: HTTPClientRequestPart) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() { context?.flush() }

    func close() {
        owner = nil
        context?.close(promise: nil)
    }

    /// Stops reading from the upstream until ``resumeReads()`` (the client is not draining what we send it).
    func pauseReads() { readsPaused = true }

    /// Makes the connection ready for the next exchange before it is pooled, or says it cannot be (closed). Reads
    /// resume: a response large enough to pause them toward a slow client may end while they are paused, and a
    /// connection pooled that way would send the next request and never read its answer (#21 item 2). While pooled,
    /// anything it reads closes it (``channelRead(context:data:)``), so nothing stays buffered or half-read.
    func prepareForReuse() -> Bool {
        guard isActive, owner == nil else { return false }
        resumeReads()
        return true
    }

    func resumeReads() {
        guard readsPaused else { return }
        readsPaused = false
        if let context, reads.release(open: true) { context.read() }
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit(open: !readsPaused) { context.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let owner else {
            // An idle pooled connection has nothing to say; anything it sends would corrupt the next exchange.
            context.close(promise: nil)
            return
        }
        owner.upstream(self, received: unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        owner?.upstreamReadComplete(self)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        owner?.upstreamWritabilityChanged(self)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let owner {
            self.owner = nil
            owner.upstreamClosed(self, error: nil)
        } else {
            onIdleClose?(self)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let owner {
            self.owner = nil
            owner.upstreamClosed(self, error: error)
        }
        context.close(promise: nil)
    }
}

/// Sits below an upstream connection's HTTP decoder (above TLS) and notes whether any response byte arrived since
/// the current exchange took the connection. A request is replayed only when none did (SPEC §8): a pooled
/// connection the upstream closed while idle. Once a byte has come — an unparseable answer, half a head, a reset
/// mid-response — the upstream may have acted on the request, and a second copy could run it twice.
final class ResponseByteWatch: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Reset by the exchange that takes the connection.
    var sawBytes = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        sawBytes = true
        context.fireChannelRead(data)
    }
}
