import NIOCore
import NIOHTTP1

/// The last handler of each `FakeFirebase` connection: collects a request (head and body), asks
/// `FakeFirebaseEndpoints` for the reply, and writes it (or drops the connection, or never answers). Confined to
/// its channel's event loop; it sits after NIO's `configureHTTPServerPipeline(withPipeliningAssistance: true)`.
final class FakeFirebaseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let endpoints: FakeFirebaseEndpoints
    private var collector = RequestCollector()
    private var isActive = true

    init(endpoints: FakeFirebaseEndpoints) {
        self.endpoints = endpoints
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let request = self.collector.collect(self.unwrapInboundIn(data)) else { return }
        self.handle(request, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isActive = false
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func handle(_ request: RequestCollector.Request, context: ChannelHandlerContext) {
        let (head, body) = (request.head, request.body)
        let keepAlive = head.isKeepAlive
        if request.bodyTooLarge {
            self.write(
                FakeFirebaseError(status: 413, message: "Request Entity Too Large").response(), keepAlive: false,
                context: context)
            return
        }
        let request = FakeFirebaseRequest(method: head.method, uri: head.uri, headers: head.headers, body: body)
        switch self.endpoints.reply(to: request) {
        case .hang:
            break
        case .drop:
            context.close(promise: nil)
        case .respond(let response):
            self.write(response, keepAlive: keepAlive, context: context)
        }
    }

    private func write(_ response: FakeFirebaseResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "content-length", value: "\(response.body.count)")
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if !response.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
