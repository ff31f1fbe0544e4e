import NIOCore
import NIOHTTP1

/// The floor's client side: NIOHTTP1's request decoder and response encoder, as the product configures them
/// (framing set explicitly: data-plane pitfall 3), and a handler that forwards each request part to the client
/// connection's own upstream connection with the head rewritten in `HTTPHeaders`.
final class CodecClientHandler: RelayHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static func install(on channel: Channel, configuration: ProxyConfiguration) throws {
        var encoder = HTTPResponseEncoder.Configuration()
        encoder.automaticallySetFramingHeaders = false
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTPResponseEncoder(configuration: encoder))
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        try pipeline.addHandler(CodecClientHandler(configuration: configuration))
    }

    private let configuration: ProxyConfiguration
    var context: ChannelHandlerContext?
    private var upstream: CodecUpstreamHandler?
    var peer: CodecUpstreamHandler? { upstream }
    /// Closed until the upstream connection is up.
    var gate = ReadGate(paused: true)
    /// The requests forwarded whose responses have not ended, oldest first.
    private(set) var pending = CircularBuffer<PendingResponse>(initialCapacity: 4)
    private var closing = false

    init(configuration: ProxyConfiguration) {
        self.configuration = configuration
    }

    func channelActive(context: ChannelHandlerContext) {
        let configuration = self.configuration
        UpstreamConnector.connect(
            on: context.eventLoop, to: configuration.upstream,
            install: { channel in try CodecUpstreamHandler.install(on: channel) }, handler: CodecUpstreamHandler.self
        ) { result in
            switch result {
            case .success(let upstream) where context.channel.isActive:
                self.upstream = upstream
                upstream.attach(client: self)
                self.gate.set(paused: !upstream.isWritable, context)
            case .success(let upstream):
                upstream.close()
            case .failure:
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let upstream, !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(var head):
            pending.append(
                PendingResponse(
                    keepAlive: head.isKeepAlive, isHead: head.method == .HEAD, isHTTP10: head.version.minor == 0))
            HeaderRewrite.request(&head, configuration: configuration)
            upstream.send(.head(head))
        case .body(let body):
            upstream.send(.body(.byteBuffer(body)))
        case .end:
            // Trailers are not forwarded (as the product does).
            upstream.send(.end(nil))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.close()
        upstream = nil
        context.fireChannelInactive()
    }

    // MARK: called by the upstream side, on the same event loop

    /// The response to the oldest pending request has ended; closes the connection if it must.
    func responseEnded(closing mustClose: Bool) {
        guard let context, !pending.isEmpty else { return }
        let request = pending.removeFirst()
        if mustClose || !request.keepAlive {
            closing = true
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        } else {
            send(.end(nil))
        }
    }

    /// The upstream connection went away.
    func upstreamClosed() {
        upstream = nil
        context?.flush()
        context?.close(promise: nil)
    }
}
