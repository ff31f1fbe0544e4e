import NIOCore
import NIOHTTP1

/// The last handler of a `TestConnection` channel: runs one request/response exchange at a time, uploads the body
/// with backpressure, collects or streams the response, and enforces an inactivity timeout. Confined to its
/// channel's event loop (not `Sendable`; `TestConnection` reaches it through `NIOLoopBound`).
final class TestClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// One request to send.
    struct Request: Sendable {
        var head: HTTPRequestHead
        var body: TestBody
        /// Send the head alone and wait for `100 Continue` (or a final answer) before the body.
        var expectContinue: Bool
        /// Fail if nothing is read or written for this long.
        var timeout: Duration
    }

    /// Where the response goes.
    enum Sink: Sendable {
        /// Collect into a `TestResponse`.
        case buffered(EventLoopPromise<TestResponse>)
        /// Deliver the final head (with the 1xx heads before it), then each body part as it arrives.
        case streaming(
            EventLoopPromise<(HTTPResponseHead, [HTTPResponseHead])>,
            AsyncThrowingStream<[UInt8], any Error>.Continuation)
        /// Close the connection at the given point; report the final head if one had arrived.
        case abort(EventLoopPromise<HTTPResponseHead?>, TestClient.AbortPoint)
    }

    private enum Upload {
        case waitingForContinue
        case sending(sent: Int)
        case done
        case abandoned
    }

    private struct Exchange {
        let sink: Sink
        let request: Request
        var upload: Upload
        var informational: [HTTPResponseHead] = []
        var head: HTTPResponseHead?
        var body: BodyDigest
        var trailers: HTTPHeaders?
        var responseEnded = false
        var closeWhenDone = false

        var describe: String {
            "\(request.head.method.rawValue) \(request.head.uri) (response head: \(head.map { "\($0.status.code)" } ?? "none"), "
                + "\(body.length) body bytes received, upload: \(upload))"
        }
    }

    private var context: ChannelHandlerContext?
    private var exchange: Exchange?
    private var pumping = false
    private var lastActivity = NIODeadline.now()
    private var idleTimer: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: - Starting

    /// Starts an exchange; completes `sink` when it ends (fails it if the connection is busy or closed).
    func start(_ request: Request, sink: Sink) {
        guard let context, context.channel.isActive else {
            Self.fail(sink, headDelivered: false, with: TestSupportError.connectionClosed(head: nil, bodyBytes: 0))
            return
        }
        guard self.exchange == nil else {
            Self.fail(sink, headDelivered: false, with: TestSupportError.connectionBusy)
            return
        }
        let prefixCap: Int
        if case .buffered = sink { prefixCap = TestResponse.bodyCap } else { prefixCap = 0 }
        let upload: Upload
        if request.body.isNone {
            upload = .done
        } else {
            upload = request.expectContinue ? .waitingForContinue : .sending(sent: 0)
        }
        self.exchange = Exchange(sink: sink, request: request, upload: upload, body: BodyDigest(prefixCap: prefixCap))
        self.touch()
        self.armTimer(context: context)

        context.write(self.wrapOutboundOut(.head(request.head)), promise: nil)
        switch upload {
        case .done:
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        case .sending:
            self.pumpUpload(context: context)
        case .waitingForContinue, .abandoned:
            context.flush()
        }
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.touch()
        guard self.exchange != nil else { return }  // unsolicited data (e.g. after an abort): ignored
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.headReceived(head, context: context)
        case .body(let buffer):
            self.exchange?.body.add(buffer)
            guard let exchange = self.exchange else { return }
            switch exchange.sink {
            case .streaming(_, let continuation):
                continuation.yield(Array(buffer.readableBytesView))
            case .abort(_, .afterResponseBytes(let n)) where exchange.body.length >= n:
                self.finishAbort(context: context)
            case .buffered, .abort:
                break
            }
        case .end(let trailers):
            self.exchange?.trailers = trailers
            self.exchange?.responseEnded = true
            if case .abort = self.exchange?.sink {
                self.finishAbort(context: context)
            } else {
                self.completeIfDone(context: context)
            }
        }
    }

    private func headReceived(_ head: HTTPResponseHead, context: ChannelHandlerContext) {
        guard var exchange = self.exchange else { return }
        if (100..<200).contains(head.status.code) && head.status.code != 101 {
            exchange.informational.append(head)
            let startUpload: Bool
            if head.status == .continue, case .waitingForContinue = exchange.upload {
                exchange.upload = .sending(sent: 0)
                startUpload = true
            } else {
                startUpload = false
            }
            self.exchange = exchange
            if startUpload {
                self.pumpUpload(context: context)
            }
            return
        }
        exchange.head = head
        if case .waitingForContinue = exchange.upload {
            // A final answer instead of 100 Continue: the body is never sent, so the connection is unusable.
            exchange.upload = .abandoned
            exchange.closeWhenDone = true
        }
        if !head.isKeepAlive {
            exchange.closeWhenDone = true
        }
        self.exchange = exchange
        switch exchange.sink {
        case .streaming(let promise, _):
            promise.succeed((head, exchange.informational))
        case .abort(_, .afterResponseHead), .abort(_, .afterResponseBytes(...0)):
            self.finishAbort(context: context)
        case .buffered, .abort:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, case .sending = self.exchange?.upload {
            self.pumpUpload(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.idleTimer?.cancel()
        self.idleTimer = nil
        if let exchange = self.exchange {
            if exchange.responseEnded, case .abort = exchange.sink {
                self.finishAbort(context: context)
            } else if exchange.responseEnded {
                self.exchange?.closeWhenDone = true
                if case .sending = exchange.upload {
                    self.exchange?.upload = .abandoned
                }
                self.completeIfDone(context: context)
            } else {
                self.exchange = nil
                Self.fail(
                    exchange.sink, headDelivered: exchange.head != nil,
                    with: TestSupportError.connectionClosed(head: exchange.head, bodyBytes: exchange.body.length))
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let exchange = self.exchange {
            self.exchange = nil
            var error = error
            if let parserError = error as? HTTPParserError, parserError == .invalidEOFState {
                // NIO's decoder reports a close mid-message as a parser error: report it like any other close.
                error = TestSupportError.connectionClosed(head: exchange.head, bodyBytes: exchange.body.length)
            }
            Self.fail(exchange.sink, headDelivered: exchange.head != nil, with: error)
        }
        context.close(promise: nil)
    }

    // MARK: - Upload

    /// Writes body chunks while the channel is writable; resumes from `channelWritabilityChanged`.
    private func pumpUpload(context: ChannelHandlerContext) {
        if self.pumping { return }
        self.pumping = true
        defer { self.pumping = false }
        while let exchange = self.exchange, case .sending(let alreadySent) = exchange.upload {
            let body = exchange.request.body
            let total = body.length
            var stopAt = total
            if case .abort(_, .afterRequestBytes(let n)) = exchange.sink {
                stopAt = min(max(n, 0), total)
            }
            var sent = alreadySent
            var lastWrite: EventLoopFuture<Void>?
            while sent < stopAt && context.channel.isWritable {
                let count = min(TestPattern.chunkSize, stopAt - sent)
                let chunk = Self.chunk(of: body, offset: sent, count: count, allocator: context.channel.allocator)
                lastWrite = context.write(self.wrapOutboundOut(.body(.byteBuffer(chunk))))
                sent += count
            }
            self.exchange?.upload = .sending(sent: sent)
            self.touch()
            if sent == total && stopAt == total {
                self.exchange?.upload = .done
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                self.completeIfDone(context: context)
                return
            }
            if sent >= stopAt {
                // Abort point reached: once the bytes are handed to the kernel, close.
                self.exchange?.upload = .abandoned
                context.flush()
                let written = lastWrite ?? context.eventLoop.makeSucceededVoidFuture()
                written.assumeIsolated().whenComplete { _ in self.finishAbort(context: context) }
                return
            }
            context.flush()  // may complete writes and re-enter (writability, or close on a write error)
            if !context.channel.isWritable {
                return
            }
        }
    }

    private static func chunk(of body: TestBody, offset: Int, count: Int, allocator: ByteBufferAllocator) -> ByteBuffer
    {
        switch body {
        case .none:
            return allocator.buffer(capacity: 0)
        case .bytes(let bytes):
            var buffer = allocator.buffer(capacity: count)
            buffer.writeBytes(bytes[offset..<(offset + count)])
            return buffer
        case .stream:
            return TestPattern.buffer(offset: offset, count: count, allocator: allocator)
        }
    }

    // MARK: - Completion

    /// Completes the exchange once the response has ended and the upload is finished or given up.
    private func completeIfDone(context: ChannelHandlerContext) {
        guard var exchange = self.exchange, exchange.responseEnded, let head = exchange.head else { return }
        switch exchange.upload {
        case .sending, .waitingForContinue:
            if exchange.closeWhenDone {
                exchange.upload = .abandoned  // the server is closing: stop uploading
            } else {
                return  // keep uploading; the server may be discarding the rest to keep the connection
            }
        case .done, .abandoned:
            break
        }
        self.exchange = nil
        self.idleTimer?.cancel()
        self.idleTimer = nil
        let fullySent: Bool
        if case .done = exchange.upload { fullySent = true } else { fullySent = false }
        switch exchange.sink {
        case .buffered(let promise):
            promise.succeed(
                TestResponse(
                    head: head, body: exchange.body.prefix, bodyLength: exchange.body.length,
                    bodySHA256: exchange.body.sha256, informational: exchange.informational,
                    trailers: exchange.trailers, requestBodyFullySent: fullySent))
        case .streaming(_, let continuation):
            continuation.finish()
        case .abort(let promise, _):
            promise.succeed(head)
        }
        if exchange.closeWhenDone || !fullySent {
            context.close(promise: nil)
        }
    }

    private func finishAbort(context: ChannelHandlerContext) {
        guard let exchange = self.exchange, case .abort(let promise, _) = exchange.sink else { return }
        self.exchange = nil
        self.idleTimer?.cancel()
        self.idleTimer = nil
        context.close(promise: nil)
        promise.succeed(exchange.head)
    }

    private static func fail(_ sink: Sink, headDelivered: Bool, with error: any Error) {
        switch sink {
        case .buffered(let promise):
            promise.fail(error)
        case .streaming(let promise, let continuation):
            if !headDelivered {
                promise.fail(error)
            }
            continuation.finish(throwing: error)
        case .abort(let promise, _):
            promise.fail(error)
        }
    }

    // MARK: - Inactivity timeout

    private func touch() {
        self.lastActivity = .now()
    }

    private func armTimer(context: ChannelHandlerContext) {
        self.idleTimer?.cancel()
        guard let exchange = self.exchange else { return }
        let deadline = self.lastActivity + TimeAmount(exchange.request.timeout)
        self.idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timerFired(context: context)
        }
    }

    private func timerFired(context: ChannelHandlerContext) {
        self.idleTimer = nil
        guard let exchange = self.exchange else { return }
        if NIODeadline.now() < self.lastActivity + TimeAmount(exchange.request.timeout) {
            self.armTimer(context: context)
            return
        }
        if exchange.responseEnded {
            // The answer is complete but the server stopped reading the upload: keep the answer, give up the upload
            // (`requestBodyFullySent` is false) and close.
            self.exchange?.upload = .abandoned
            self.exchange?.closeWhenDone = true
            self.completeIfDone(context: context)
            return
        }
        self.exchange = nil
        Self.fail(
            exchange.sink, headDelivered: exchange.head != nil,
            with: TestSupportError.timedOut("no progress on \(exchange.describe)", after: exchange.request.timeout))
        context.close(promise: nil)
    }
}
