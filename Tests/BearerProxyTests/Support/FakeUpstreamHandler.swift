import Foundation
import NIOCore
import NIOHTTP1

/// The last handler of each `FakeUpstream` connection: records each request and plays the behaviour the test
/// chose for it. Confined to its channel's event loop (it is not `Sendable`); it sits after NIO's
/// `configureHTTPServerPipeline(withPipeliningAssistance: true)`, which queues pipelined requests until the
/// current response has ended.
final class FakeUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long `.rejectEarly` keeps discarding the request body after its response before closing.
    static let lingerTime: TimeAmount = .seconds(2)

    /// The request being received.
    private struct Incoming {
        let recordIndex: Int
        var body: BodyDigest
    }

    /// What the response side is doing.
    private enum Output {
        case idle
        case awaitingRequestEnd(UpstreamBehaviour, RequestHead)
        case downloading(sent: Int, total: Int)
        case streamingEvents
        case silent
        case lingering
        case closed
    }

    private let state: FakeUpstreamState
    private let behaviour: @Sendable (RequestHead) -> UpstreamBehaviour
    private let connectionID: Int
    private var incoming: Incoming?
    /// The body of the last request that ended (what `.echo` reports).
    private var finishedBody = BodyDigest(prefixCap: 0)
    private var output: Output = .idle
    private var respondingToHEAD = false
    private var closeAfterResponse = false
    private var pumping = false
    private var eventsTask: Task<Void, Never>?
    private var lingerTimer: Scheduled<Void>?

    init(state: FakeUpstreamState, connectionID: Int, behaviour: @escaping @Sendable (RequestHead) -> UpstreamBehaviour)
    {
        self.state = state
        self.connectionID = connectionID
        self.behaviour = behaviour
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let nioHead):
            self.requestHeadReceived(nioHead, context: context)
        case .body(let buffer):
            self.incoming?.body.add(buffer)
        case .end:
            self.finishIncoming(complete: true)
            switch self.output {
            case .awaitingRequestEnd(let behaviour, let head):
                self.answer(behaviour, to: head, context: context)
            case .lingering:
                context.close(promise: nil)
            case .idle, .downloading, .streamingEvents, .silent, .closed:
                break
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .downloading = self.output, context.channel.isWritable {
            self.pumpDownload(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finishIncoming(complete: false)
        self.output = .closed
        self.eventsTask?.cancel()
        self.eventsTask = nil
        self.lingerTimer?.cancel()
        self.lingerTimer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: - Requests

    private func requestHeadReceived(_ nioHead: HTTPRequestHead, context: ChannelHandlerContext) {
        let head = RequestHead(nioHead)
        let index = self.state.requestStarted(head, connectionID: self.connectionID)
        self.incoming = Incoming(recordIndex: index, body: BodyDigest(prefixCap: FakeUpstream.recordedBodyPrefixCap))
        self.respondingToHEAD = nioHead.method == .HEAD
        self.closeAfterResponse = !nioHead.isKeepAlive

        switch self.behaviour(head) {
        case .rejectEarly(let status):
            self.rejectEarly(status: status, context: context)
        case .closeImmediately:
            self.finishIncoming(complete: false)
            self.output = .closed
            context.close(promise: nil)
        case .expectContinue:
            let expects = nioHead.headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
            if expects {
                let informational = HTTPResponseHead(version: .http1_1, status: .continue)
                context.writeAndFlush(self.wrapOutboundOut(.head(informational)), promise: nil)
            }
            self.output = .awaitingRequestEnd(.echo, head)
        case let other:
            self.output = .awaitingRequestEnd(other, head)
        }
    }

    private func finishIncoming(complete: Bool) {
        guard let incoming = self.incoming else { return }
        self.incoming = nil
        self.finishedBody = incoming.body
        self.state.requestFinished(index: incoming.recordIndex, body: incoming.body, complete: complete)
    }

    // MARK: - Responses

    private func answer(_ behaviour: UpstreamBehaviour, to head: RequestHead, context: ChannelHandlerContext) {
        switch behaviour {
        case .echo, .expectContinue:
            self.echo(head, context: context)
        case .respond(let status, let headers, let body):
            self.respond(status: status, headers: headers, body: body, context: context)
        case .download(let bytes, let chunked):
            var headers = HTTPHeaders([("content-type", "application/octet-stream")])
            headers.add(name: chunked ? "transfer-encoding" : "content-length", value: chunked ? "chunked" : "\(bytes)")
            self.writeHead(status: .ok, headers: headers, context: context)
            if self.respondingToHEAD {
                self.endResponse(context: context)
            } else {
                self.output = .downloading(sent: 0, total: bytes)
                self.pumpDownload(context: context)
            }
        case .events(let stream, let contentType):
            let headers = HTTPHeaders([
                ("content-type", contentType), ("cache-control", "no-cache"), ("transfer-encoding", "chunked"),
            ])
            self.writeHead(status: .ok, headers: headers, context: context)
            context.flush()
            if self.respondingToHEAD {
                self.endResponse(context: context)
            } else {
                self.output = .streamingEvents
                self.startEvents(stream, context: context)
            }
        case .silent:
            self.output = .silent
        case .rejectEarly(let status):
            self.rejectEarly(status: status, context: context)
        case .closeImmediately:
            self.output = .closed
            context.close(promise: nil)
        }
    }

    private func echo(_ head: RequestHead, context: ChannelHandlerContext) {
        let payload = EchoPayload(
            method: head.method, uri: head.uri, version: head.versionText,
            headers: head.headerList.map { [$0.name, $0.value] },
            bodyLength: self.finishedBody.length, bodySHA256: self.finishedBody.sha256)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(payload)).map { [UInt8]($0) } ?? Array("{}".utf8)
        self.respond(
            status: 200, headers: [("content-type", "application/json")], body: body, context: context)
    }

    private func respond(status: Int, headers list: [(String, String)], body: [UInt8], context: ChannelHandlerContext) {
        let status = HTTPResponseStatus(statusCode: status)
        var headers = HTTPHeaders(list)
        let mayHaveBody = status.code >= 200 && status.code != 204 && status.code != 304
        if headers.contains(name: "content-length") {
            if headers.first(name: "content-length") != "\(body.count)" && !self.respondingToHEAD {
                self.closeAfterResponse = true
            }
        } else if !headers.contains(name: "transfer-encoding") && mayHaveBody {
            headers.add(name: "content-length", value: "\(body.count)")
        }
        self.writeHead(status: status, headers: headers, context: context)
        if mayHaveBody && !self.respondingToHEAD && !body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        self.endResponse(context: context)
    }

    private func writeHead(status: HTTPResponseStatus, headers: HTTPHeaders, context: ChannelHandlerContext) {
        var headers = headers
        let connectionTokens = headers[canonicalForm: "connection"].map { $0.lowercased() }
        if connectionTokens.contains("close") {
            self.closeAfterResponse = true
        } else if self.closeAfterResponse {
            headers.add(name: "connection", value: "close")
        }
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
    }

    private func endResponse(context: ChannelHandlerContext) {
        self.output = .idle
        let written = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if self.closeAfterResponse {
            self.output = .closed
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// Writes pattern chunks while the channel is writable; resumes from `channelWritabilityChanged`.
    private func pumpDownload(context: ChannelHandlerContext) {
        if self.pumping { return }
        self.pumping = true
        defer { self.pumping = false }
        while case .downloading(var sent, let total) = self.output {
            while sent < total && context.channel.isWritable {
                let count = min(TestPattern.chunkSize, total - sent)
                let chunk = TestPattern.buffer(offset: sent, count: count, allocator: context.channel.allocator)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
                sent += count
            }
            self.output = .downloading(sent: sent, total: total)
            if sent == total {
                self.endResponse(context: context)
                return
            }
            context.flush()  // may complete writes and make the channel writable again, re-entrantly
            if !context.channel.isWritable {
                return  // channelWritabilityChanged resumes
            }
        }
    }

    private func startEvents(_ stream: AsyncStream<String>, context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        self.eventsTask = Task {
            for await event in stream {
                loop.execute { bound.value.handler.writeEvent(event, context: bound.value.context) }
            }
            loop.execute { bound.value.handler.finishEvents(context: bound.value.context) }
        }
    }

    private func writeEvent(_ event: String, context: ChannelHandlerContext) {
        guard case .streamingEvents = self.output else { return }
        var buffer = context.channel.allocator.buffer(capacity: event.utf8.count)
        buffer.writeString(event)
        context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    }

    private func finishEvents(context: ChannelHandlerContext) {
        guard case .streamingEvents = self.output else { return }
        self.eventsTask = nil
        self.endResponse(context: context)
    }

    /// Answers before the body, then shuts the write side and discards the rest of the request (lingering close).
    private func rejectEarly(status: Int, context: ChannelHandlerContext) {
        let text = Array("rejected early by FakeUpstream with \(status)\n".utf8)
        let headers = HTTPHeaders([
            ("content-type", "text/plain"), ("content-length", "\(text.count)"), ("connection", "close"),
        ])
        self.closeAfterResponse = true
        self.writeHead(status: HTTPResponseStatus(statusCode: status), headers: headers, context: context)
        if !self.respondingToHEAD {
            var buffer = context.channel.allocator.buffer(capacity: text.count)
            buffer.writeBytes(text)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        self.output = .lingering
        context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            guard case .lingering = self.output else { return }
            if self.incoming == nil {
                context.close(promise: nil)
                return
            }
            context.close(mode: .output).assumeIsolated().whenFailure { _ in context.close(promise: nil) }
            self.lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) {
                context.close(promise: nil)
            }
        }
    }
}
