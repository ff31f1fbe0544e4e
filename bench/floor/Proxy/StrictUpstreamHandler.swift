import BearerCodec
import NIOCore

/// The prototype's upstream side: response heads read with `ResponseHead.parse` and written on rewritten, bodies
/// passed through as slices.
final class StrictUpstreamHandler: RelayHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case head(ByteBuffer?)
        case length(Int)
        case chunked(ChunkedBody)
        /// Until the upstream closes (RFC 9112 §6.3 rule 8).
        case untilClose
        /// Refused or finished: nothing more is read.
        case closed
    }

    var context: ChannelHandlerContext?
    private var client: StrictClientHandler?
    var peer: StrictClientHandler? { client }
    var gate = ReadGate(paused: false)
    private var state = State.head(nil)
    /// The response being forwarded will close the client connection at its end.
    private var closeAfterResponse = false

    func attach(client: StrictClientHandler) {
        self.client = client
        gate.set(paused: !client.isWritable, context!)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let client else { return }
        var buffer = unwrapInboundIn(data)
        do {
            try forward(&buffer, to: client, allocator: context.channel.allocator)
        } catch {
            // A response the parser refused: 502 if none of it reached the client, then both connections go.
            if case .head = state, !client.pending.isEmpty {
                var out = context.channel.allocator.buffer(capacity: 80)
                out.writeString("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                client.send(out)
            }
            state = .closed
            client.upstreamClosed()
            close()
        }
    }

    private func forward(_ buffer: inout ByteBuffer, to client: StrictClientHandler, allocator: ByteBufferAllocator)
        throws(HeadError)
    {
        while buffer.readableBytes > 0 {
            switch state {
            case .head(let partial):
                guard HeadAccumulator.append(&buffer, to: partial) else {
                    state = .head(buffer)
                    return
                }
                guard let request = client.pending.first else { throw .malformed(.statusLine) }  // unsolicited
                guard let head = try ResponseHead.parse(buffer.readableBytesUInt8Span, requestWasHead: request.isHead)
                else {
                    state = .head(buffer)
                    return
                }
                var closing = false
                if !head.isInformational {
                    closing = !head.keepAlive || !request.keepAlive
                    closeAfterResponse = closing
                }
                var out = allocator.buffer(capacity: head.length + 24)
                head.writeForwarded(buffer.readableBytesUInt8Span, closing: closing, into: &out)
                buffer.moveReaderIndex(forwardBy: head.length)
                client.send(out)
                if head.isInformational {
                    state = .head(nil)
                    continue
                }
                switch head.framing {
                case .none: endResponse()
                case .length(let length): state = .length(length)
                case .chunked: state = .chunked(ChunkedBody())
                case .untilClose: state = .untilClose
                }
            case .length(let remaining):
                let count = min(remaining, buffer.readableBytes)
                client.send(buffer.readSlice(length: count)!)
                if count == remaining { endResponse() } else { state = .length(remaining - count) }
            case .chunked(var body):
                var consumed = 0
                do {
                    let bytes = buffer.readableBytesUInt8Span
                    while consumed < bytes.count, !body.isComplete {
                        let run = try body.next(in: bytes, from: consumed)
                        if run.end == consumed { break }
                        consumed = run.end
                    }
                }
                client.send(buffer.readSlice(length: consumed)!)
                if body.isComplete { endResponse() } else { state = .chunked(body) }
            case .untilClose:
                client.send(buffer)
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            case .closed:
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            }
        }
    }

    private func endResponse() {
        state = closeAfterResponse ? .closed : .head(nil)
        client?.responseEnded(closing: closeAfterResponse)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // An untilClose body ends here; anything else pending is cut short. Either way the client connection goes.
        client?.upstreamClosed()
        client = nil
        context.fireChannelInactive()
    }

    // MARK: called by the client side, on the same event loop

    func close() {
        client = nil
        context?.close(promise: nil)
    }
}
