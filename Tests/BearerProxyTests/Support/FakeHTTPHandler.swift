import NIOCore
import NIOHTTP1

/// What a fake identity service serves (`FakeIdentityProvider`, `FakeFirebase`): the answer to each request once
/// it has fully arrived. Called on the connection's event loop.
protocol FakeHTTPEndpoints: Sendable {
    associatedtype Response: FakeHTTPResponse & Sendable

    /// The answer to a request whose body went past ``RequestCollector/maximumBodySize``; the connection then closes.
    var bodyTooLarge: Response { get }

    /// Answers `request` by calling `respond` once: at once, or later from any thread (an answer held back).
    func answer(_ request: FakeHTTPRequest, respond: @escaping @Sendable (Response) -> Void)
}

/// The last handler of each connection of a fake with ``FakeHTTPEndpoints``: collects a request (head and body),
/// asks the endpoints for the answer, and writes it unless the client has gone meanwhile. Confined to its channel's
/// event loop (it is not `Sendable`); it sits after NIO's `configureHTTPServerPipeline(withPipeliningAssistance:
/// true)`, which queues pipelined requests until the current response has ended.
final class FakeHTTPHandler<Endpoints: FakeHTTPEndpoints>: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let endpoints: Endpoints
    private var collector = RequestCollector()
    private var isActive = true

    init(endpoints: Endpoints) {
        self.endpoints = endpoints
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let request = self.collector.collect(self.unwrapInboundIn(data)) else { return }
        if request.bodyTooLarge {
            context.writeFakeResponse(self.endpoints.bodyTooLarge, keepAlive: false)
            return
        }
        let keepAlive = request.head.isKeepAlive
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let fakeRequest = FakeHTTPRequest(
            method: request.head.method, uri: request.head.uri, headers: request.head.headers, body: request.body)
        self.endpoints.answer(fakeRequest) { response in
            guard loop.inEventLoop else {
                loop.execute { bound.value.handler.write(response, keepAlive: keepAlive, context: bound.value.context) }
                return
            }
            bound.value.handler.write(response, keepAlive: keepAlive, context: bound.value.context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isActive = false
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Writes `response` unless the client has gone meanwhile (an answer held back).
    private func write(_ response: Endpoints.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        context.writeFakeResponse(response, keepAlive: keepAlive)
    }
}

/// Gathers one HTTP request's parts (head, body up to a limit) for the fake identity servers' handlers.
struct RequestCollector {
    /// A whole request.
    struct Request {
        var head: HTTPRequestHead
        var body: [UInt8]
        /// The body went past the limit (and was not kept): answer 413.
        var bodyTooLarge: Bool
    }

    /// The largest request body kept (a token request is a few KiB).
    static let maximumBodySize = 1 << 20

    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    /// Takes one part; returns the request once its end has arrived.
    mutating func collect(_ part: HTTPServerRequestPart) -> Request? {
        switch part {
        case .head(let head):
            self.head = head
            self.body = []
            self.bodyTooLarge = false
        case .body(let buffer):
            if self.body.count + buffer.readableBytes > Self.maximumBodySize {
                self.bodyTooLarge = true
            } else {
                self.body.append(contentsOf: buffer.readableBytesView)
            }
        case .end:
            guard let head = self.head else { return nil }
            self.head = nil
            defer { self.body = [] }
            return Request(head: head, body: self.body, bodyTooLarge: self.bodyTooLarge)
        }
        return nil
    }
}
