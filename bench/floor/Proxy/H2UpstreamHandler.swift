import BearerCodec
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Where an upstream response goes: a stream, on the client connection's event loop.
protocol H2ResponseReceiver: AnyObject {
    func responseHead(_ headers: HPACKHeaders, endStream: Bool, stream: HTTP2StreamID)
    func responseBody(_ body: ByteBuffer, endStream: Bool, stream: HTTP2StreamID)
    /// The upstream failed or sent what the floor does not forward: the stream is reset.
    func responseFailed(stream: HTTP2StreamID)
    /// The upstream's read burst ended: the client connection flushes.
    func upstreamReadComplete()
}

/// One kept-alive HTTP/1.1 upstream connection of an ``H2UpstreamPool``, one request at a time: the head read with
/// `ResponseHead.parse`, its fields sent on as HPACK (lowercase, without hop-by-hop fields; RFC 9113 §8.2.2), the body
/// passed through as slices. Only bodies with a length (or none) are forwarded.
final class H2UpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case idle
        case head(ByteBuffer?)
        case length(Int)
    }

    private var context: ChannelHandlerContext?
    weak var pool: H2UpstreamPool?
    private var receiver: (any H2ResponseReceiver)?
    private var stream = HTTP2StreamID(0)
    private var state = State.idle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Sends `head`; its response goes to `receiver` for `stream`.
    func send(_ head: ByteBuffer, stream: HTTP2StreamID, to receiver: any H2ResponseReceiver) {
        self.receiver = receiver
        self.stream = stream
        state = .head(nil)
        context?.writeAndFlush(wrapOutboundOut(head), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        while buffer.readableBytes > 0 {
            switch state {
            case .idle:
                return fail()
            case .head(let partial):
                guard HeadAccumulator.append(&buffer, to: partial) else {
                    state = .head(buffer)
                    return
                }
                let parsed: ResponseHead?
                do {
                    parsed = try ResponseHead.parse(buffer.readableBytesUInt8Span, requestWasHead: false)
                } catch {
                    return fail()
                }
                guard let head = parsed else {
                    state = .head(buffer)
                    return
                }
                guard !head.isInformational, head.keepAlive else { return fail() }
                let headers = Self.headers(head, buffer)
                buffer.moveReaderIndex(forwardBy: head.length)
                switch head.framing {
                case .none, .length(0):
                    receiver?.responseHead(headers, endStream: true, stream: stream)
                    ended()
                case .length(let length):
                    receiver?.responseHead(headers, endStream: false, stream: stream)
                    state = .length(length)
                default:
                    return fail()
                }
            case .length(let remaining):
                let count = min(remaining, buffer.readableBytes)
                receiver?.responseBody(buffer.readSlice(length: count)!, endStream: count == remaining, stream: stream)
                if count == remaining { ended() } else { state = .length(remaining - count) }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        let flushing = lastReceiver ?? receiver
        lastReceiver = nil
        flushing?.upstreamReadComplete()
    }

    /// The receiver of the response that ended in this read: it still flushes at the read's end.
    private var lastReceiver: (any H2ResponseReceiver)?

    private func ended() {
        state = .idle
        lastReceiver = receiver
        receiver = nil
        pool?.release(self)
    }

    private func fail() {
        state = .idle
        receiver?.responseFailed(stream: stream)
        receiver = nil
        context?.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pool?.remove(self)
        if receiver != nil { fail() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func close() {
        context?.close(promise: nil)
    }

    private static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
    ]

    private static func headers(_ head: ResponseHead, _ bytes: ByteBuffer) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        headers.add(name: ":status", value: String(head.status))
        let span = bytes.readableBytesUInt8Span
        var lines = FieldLines(fieldsStart: head.fieldsStart, length: head.length)
        while let line = lines.next(in: span) {
            guard
                let name = bytes.getString(
                    at: bytes.readerIndex + line.field.name.lowerBound, length: line.field.name.count)?.lowercased(),
                !hopByHop.contains(name),
                let value = bytes.getString(
                    at: bytes.readerIndex + line.field.value.lowerBound, length: line.field.value.count)
            else { continue }
            headers.add(name: name, value: value)
        }
        return headers
    }
}
