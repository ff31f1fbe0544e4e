import NIOCore
import NIOHTTP1

/// The floor's upstream side: NIOHTTP1's request encoder and response decoder (1xx forwarded: data-plane pitfall
/// 2), and a handler that hands each response part to its client connection with the head rewritten.
final class CodecUpstreamHandler: RelayHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    static func install(on channel: Channel) throws {
        var encoder = HTTPRequestEncoder.Configuration()
        encoder.automaticallySetFramingHeaders = false
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTPRequestEncoder(configuration: encoder))
        try pipeline.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        try pipeline.addHandler(CodecUpstreamHandler())
    }

    var context: ChannelHandlerContext?
    private var client: CodecClientHandler?
    var peer: CodecClientHandler? { client }
    var gate = ReadGate(paused: false)
    /// The response being forwarded will close the client connection at its end.
    private var closeAfterResponse = false

    func attach(client: CodecClientHandler) {
        self.client = client
        gate.set(paused: !client.isWritable, context!)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let client else { return }
        switch unwrapInboundIn(data) {
        case .head(var head):
            guard head.status.code >= 200 else {
                HeaderRewrite.removeHopByHop(&head.headers)
                client.send(.head(head))
                return
            }
            let request = client.pending.first
            closeAfterResponse = !head.isKeepAlive
            let hasBody = !(request?.isHead ?? false) && head.status != .noContent && head.status != .notModified
            HeaderRewrite.response(&head)
            if hasBody, !head.headers.contains(name: "content-length"),
                !head.headers.contains(name: "transfer-encoding")
            {
                // Read until the upstream closes: chunked to an HTTP/1.1 client, closed after for HTTP/1.0.
                if request?.isHTTP10 ?? true {
                    closeAfterResponse = true
                } else {
                    head.headers.add(name: "transfer-encoding", value: "chunked")
                }
            }
            if closeAfterResponse || !(request?.keepAlive ?? false) {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            }
            client.send(.head(head))
        case .body(let body):
            client.send(.body(.byteBuffer(body)))
        case .end:
            client.responseEnded(closing: closeAfterResponse)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
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
