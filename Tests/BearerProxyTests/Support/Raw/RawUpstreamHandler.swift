import NIOCore
import NIOHTTP1

/// Records the bytes that pass it on one layer of a raw upstream connection, and lets the upstream write raw bytes
/// from that layer (below the HTTP encoder, above TLS).
final class RawByteRecorder: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where bytes are recorded: as they arrive on the socket, or after TLS.
    enum Layer: Sendable {
        case wire
        case plain
    }

    private let state: RawUpstreamState
    private let connection: Int
    private let layer: Layer
    private var context: ChannelHandlerContext?

    init(state: RawUpstreamState, connection: Int, layer: Layer) {
        self.state = state
        self.connection = connection
        self.layer = layer
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        state.record(unwrapInboundIn(data), on: connection, layer)
        context.fireChannelRead(data)
    }

    /// Writes `text` as it is from this layer and flushes; with `thenClose`, closes the connection once it is
    /// written.
    func send(_ text: String, thenClose: Bool = false) {
        guard let context else { return }
        let written = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)))
        guard thenClose else { return }
        let channel = context.channel
        written.whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Frames requests with NIO's decoder (as a real server does) and answers each as the test's script says, in
/// order; a connection with a held answer answers nothing after it until released.
final class RawUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: RawUpstreamState
    private let connection: Int
    private let plain: RawByteRecorder
    private let answer: @Sendable (RawRequest) -> RawUpstream.Answer
    private var current: RawRequest?

    init(
        state: RawUpstreamState, connection: Int, plain: RawByteRecorder,
        answer: @escaping @Sendable (RawRequest) -> RawUpstream.Answer
    ) {
        self.state = state
        self.connection = connection
        self.plain = plain
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            current = RawRequest(
                connection: connection, method: head.method.rawValue, uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) })
        case .body(let buffer):
            current?.body += buffer.readableBytesView
        case .end(let trailers):
            guard var request = current else { return }
            current = nil
            request.trailers = trailers.map { $0.map { ($0.name, $0.value) } } ?? []
            let answer = self.answer(request)
            // A held answer is registered before the request is recorded: a test that waits for the request and then
            // releases must find it held.
            if case .held = answer { hold(context: context) }
            state.record(request)
            if case .held = answer { return }
            play(answer, context: context)
        }
    }

    private func play(_ answer: RawUpstream.Answer, context: ChannelHandlerContext) {
        switch answer {
        case .respond(let status, let headers, let body):
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "content-length", value: String(body.utf8.count))
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: fields)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .raw(let text):
            plain.send(text)
        case .rawThenClose(let text):
            plain.send(text, thenClose: true)
        case .close:
            context.close(promise: nil)
        case .held:
            hold(context: context)
        }
    }

    private func hold(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        state.hold { answer in
            bound.eventLoop.execute { bound.value.0.play(answer, context: bound.value.1) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
