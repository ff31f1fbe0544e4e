import NIOCore
import NIOHTTP1

/// The last handler of each `FakeIdentityProvider` connection: collects a request (head and body), asks
/// `FakeIdentityEndpoints` for the reply, and plays it — at once, after a delay (an event-loop timer), when the
/// latch is released, or never. Confined to its channel's event loop (it is not `Sendable`); it sits after NIO's
/// `configureHTTPServerPipeline(withPipeliningAssistance: true)`, which queues pipelined requests until the current
/// response has ended.
final class FakeIdentityHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let endpoints: FakeIdentityEndpoints
    private var collector = RequestCollector()
    private var isActive = true
    private var timer: Scheduled<Void>?

    init(endpoints: FakeIdentityEndpoints) {
        self.endpoints = endpoints
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let request = self.collector.collect(self.unwrapInboundIn(data)) else { return }
        self.handle(request, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isActive = false
        self.timer?.cancel()
        self.timer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func handle(_ request: RequestCollector.Request, context: ChannelHandlerContext) {
        let (head, body) = (request.head, request.body)
        let keepAlive = head.isKeepAlive
        if request.bodyTooLarge {
            let response = FakeIdentityResponse.json(status: 413, ["error": "request_too_large"])
            context.writeFakeResponse(response, keepAlive: false)
            return
        }
        let request = FakeHTTPRequest(method: head.method, uri: head.uri, headers: head.headers, body: body)
        switch self.endpoints.reply(to: request) {
        case .hang:
            break
        case .drop:
            context.close(promise: nil)
        case .respond(let response, let delay, let holdable):
            if let delay {
                self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                    self.timer = nil
                    self.deliver(response, keepAlive: keepAlive, holdable: holdable, context: context)
                }
            } else {
                self.deliver(response, keepAlive: keepAlive, holdable: holdable, context: context)
            }
        }
    }

    /// Writes now, or parks the write with the provider's latch if it is on.
    private func deliver(
        _ response: FakeIdentityResponse, keepAlive: Bool, holdable: Bool, context: ChannelHandlerContext
    ) {
        if holdable {
            let loop = context.eventLoop
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
            let held = self.endpoints.state.holdIfLatched {
                loop.execute {
                    bound.value.handler.write(response, keepAlive: keepAlive, context: bound.value.context)
                }
            }
            if held { return }
        }
        self.write(response, keepAlive: keepAlive, context: context)
    }

    /// Writes `response` unless the client has gone meanwhile (a delayed or held answer).
    private func write(_ response: FakeIdentityResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        context.writeFakeResponse(response, keepAlive: keepAlive)
    }
}
