import BearerCodec
import NIOCore

/// The prototype's client side: no codec. Request heads are read from the bytes with `RequestHead.parse`, written
/// on rewritten without `HTTPHeaders`; bodies pass through as slices of the bytes read, chunked ones checked by
/// `ChunkedBody` on the way.
final class StrictClientHandler: RelayHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static func install(on channel: Channel, configuration: ProxyConfiguration) throws {
        try channel.pipeline.syncOperations.addHandler(StrictClientHandler(configuration: configuration))
    }

    /// Where the request bytes are.
    private enum State {
        /// Between requests or inside a head; the bytes of a head not yet complete.
        case head(ByteBuffer?)
        /// In a Content-Length body: this many bytes to go.
        case length(Int)
        /// In a chunked body.
        case chunked(ChunkedBody)
        /// No more requests: the last one asked to close, or one was refused.
        case closed
    }

    private let rewrite: RequestRewrite
    private let configuration: ProxyConfiguration
    var context: ChannelHandlerContext?
    private var upstream: StrictUpstreamHandler?
    var peer: StrictUpstreamHandler? { upstream }
    var gate = ReadGate(paused: true)
    private var state = State.head(nil)
    /// The requests forwarded whose responses have not ended, oldest first.
    private(set) var pending = CircularBuffer<PendingResponse>(initialCapacity: 4)

    init(configuration: ProxyConfiguration) {
        self.configuration = configuration
        self.rewrite = RequestRewrite(
            stripPrefix: configuration.stripPrefix, host: configuration.upstream.authority,
            authorization: configuration.authorization)
    }

    func channelActive(context: ChannelHandlerContext) {
        UpstreamConnector.connect(
            on: context.eventLoop, to: configuration.upstream,
            install: { channel in try channel.pipeline.syncOperations.addHandler(StrictUpstreamHandler()) },
            handler: StrictUpstreamHandler.self
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
        guard let upstream else { return }
        var buffer = unwrapInboundIn(data)
        do {
            try forward(&buffer, to: upstream, allocator: context.channel.allocator)
        } catch {
            refuse(error, context: context)
        }
    }

    private func forward(_ buffer: inout ByteBuffer, to upstream: StrictUpstreamHandler, allocator: ByteBufferAllocator)
        throws(HeadError)
    {
        while buffer.readableBytes > 0 {
            switch state {
            case .head(let partial):
                guard HeadAccumulator.append(&buffer, to: partial) else {
                    state = .head(buffer)
                    return
                }
                guard let head = try RequestHead.parse(buffer.readableBytesUInt8Span) else {
                    state = .head(buffer)
                    return
                }
                var out = allocator.buffer(capacity: head.length + rewrite.addedFields.count + 2)
                head.writeForwarded(buffer.readableBytesUInt8Span, rewrite: rewrite, into: &out)
                buffer.moveReaderIndex(forwardBy: head.length)
                pending.append(
                    PendingResponse(keepAlive: head.keepAlive, isHead: head.isHead, isHTTP10: head.minorVersion == 0))
                upstream.send(out)
                switch head.framing {
                case .none, .untilClose: state = head.keepAlive ? .head(nil) : .closed
                case .length(let length): state = .length(length)
                case .chunked: state = .chunked(ChunkedBody())
                }
                if !head.keepAlive { stopAfterBody = true }
            case .length(let remaining):
                let count = min(remaining, buffer.readableBytes)
                upstream.send(buffer.readSlice(length: count)!)
                state = count == remaining ? (stopAfterBody ? .closed : .head(nil)) : .length(remaining - count)
            case .chunked(var body):
                try forwardChunks(&buffer, body: &body, to: upstream)
                state = body.isComplete ? (stopAfterBody ? .closed : .head(nil)) : .chunked(body)
            case .closed:
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            }
        }
    }

    /// The last request asked to close: nothing after its body is read.
    private var stopAfterBody = false

    /// Passes the chunks on as they came, less any trailer fields (dropped, as the product does).
    private func forwardChunks(_ buffer: inout ByteBuffer, body: inout ChunkedBody, to upstream: StrictUpstreamHandler)
        throws(HeadError)
    {
        var consumed = 0
        var kept: [Range<Int>] = []
        do {
            let bytes = buffer.readableBytesUInt8Span
            var keptStart = 0
            while consumed < bytes.count, !body.isComplete {
                let run = try body.next(in: bytes, from: consumed)
                if run.kind == .trailer {
                    if consumed > keptStart { kept.append(keptStart..<consumed) }
                    keptStart = run.end
                }
                if run.end == consumed { break }
                consumed = run.end
            }
            if consumed > keptStart { kept.append(keptStart..<consumed) }
        }
        for range in kept {
            upstream.send(buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count)!)
        }
        buffer.moveReaderIndex(forwardBy: consumed)
    }

    /// A request the parser refused: its status if nothing is pending, then close.
    private func refuse(_ error: HeadError, context: ChannelHandlerContext) {
        state = .closed
        guard pending.isEmpty else {
            context.close(promise: nil)
            return
        }
        var out = context.channel.allocator.buffer(capacity: 96)
        out.writeString("HTTP/1.1 \(error.status) Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        context.writeAndFlush(wrapOutboundOut(out)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
            state = .closed
            context.flush()
            context.close(promise: nil)
            upstream?.close()
            upstream = nil
        }
    }

    /// The upstream connection went away.
    func upstreamClosed() {
        upstream = nil
        context?.flush()
        context?.close(promise: nil)
    }
}
