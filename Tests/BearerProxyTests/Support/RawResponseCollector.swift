import NIOCore
import NIOHTTP1

/// Last handler of a `TestClient.raw` channel: collects the responses NIO's `HTTPResponseDecoder` decodes, in
/// order, until the expected number have ended or the connection closes; fails after `timeout` without progress.
final class RawResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// Extra GET heads fed to the decoder beyond the expected responses, so surplus responses still decode.
    static let extraPrimedRequests = 8

    private let expected: Int
    private let methods: [HTTPMethod]
    private let promise: EventLoopPromise<[TestResponse]>
    private let timeout: Duration
    private var responses: [TestResponse] = []
    private var informational: [HTTPResponseHead] = []
    private var head: HTTPResponseHead?
    private var body = BodyDigest(prefixCap: TestResponse.bodyCap)
    private var done = false
    private var lastActivity = NIODeadline.now()
    private var idleTimer: Scheduled<Void>?

    init(expected: Int, methods: [HTTPMethod], promise: EventLoopPromise<[TestResponse]>, timeout: Duration) {
        self.expected = expected
        self.methods = methods
        self.promise = promise
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Tell the decoder which method each response answers (it needs this to frame HEAD responses, and refuses
        // responses with no request outstanding). `RawBytesWriter` swallows these heads.
        for index in 0..<(max(self.expected, self.methods.count) + Self.extraPrimedRequests) {
            let method = index < self.methods.count ? self.methods[index] : .GET
            let head = HTTPRequestHead(version: .http1_1, method: method, uri: "/")
            context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.lastActivity = .now()
        self.armTimer(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.lastActivity = .now()
        guard !self.done else { return }
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            if (100..<200).contains(head.status.code) && head.status.code != 101 {
                self.informational.append(head)
            } else {
                self.head = head
            }
        case .body(let buffer):
            self.body.add(buffer)
        case .end(let trailers):
            guard let head = self.head else { return }
            self.responses.append(
                TestResponse(
                    head: head, body: self.body.prefix, bodyLength: self.body.length, bodySHA256: self.body.sha256,
                    informational: self.informational, trailers: trailers, requestBodyFullySent: true))
            self.head = nil
            self.informational = []
            self.body = BodyDigest(prefixCap: TestResponse.bodyCap)
            if self.responses.count >= self.expected {
                self.finish(context: context, with: .success(self.responses))
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The server closed first: hand back what was complete.
        self.finish(context: context, with: .success(self.responses))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.finish(context: context, with: .failure(error))
    }

    private func finish(context: ChannelHandlerContext, with result: Result<[TestResponse], any Error>) {
        guard !self.done else { return }
        self.done = true
        self.idleTimer?.cancel()
        self.idleTimer = nil
        self.promise.completeWith(result)
        context.close(promise: nil)
    }

    private func armTimer(context: ChannelHandlerContext) {
        self.idleTimer = context.eventLoop.assumeIsolated().scheduleTask(
            deadline: self.lastActivity + TimeAmount(self.timeout)
        ) {
            guard !self.done else { return }
            if NIODeadline.now() < self.lastActivity + TimeAmount(self.timeout) {
                self.armTimer(context: context)
                return
            }
            let what = "waiting for \(self.expected) raw response(s), got \(self.responses.count)"
            self.finish(context: context, with: .failure(TestSupportError.timedOut(what, after: self.timeout)))
        }
    }
}
