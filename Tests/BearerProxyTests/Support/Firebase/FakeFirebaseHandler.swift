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
            context.writeFakeResponse(
                FakeFirebaseError(status: 413, message: "Request Entity Too Large").response(), keepAlive: false)
            return
        }
        let request = FakeHTTPRequest(method: head.method, uri: head.uri, headers: head.headers, body: body)
        switch self.endpoints.reply(to: request) {
        case .hang:
            break
        case .drop:
            context.close(promise: nil)
        case .respond(let response):
            if self.isActive { context.writeFakeResponse(response, keepAlive: keepAlive) }
        }
    }
}
