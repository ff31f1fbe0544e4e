import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1

/// Serves one client connection: routes each request, gets its token, forwards it upstream and streams the answer
/// back (SPEC §8). Confined to the connection's event loop, which is also where its upstream connections live.
///
/// The handler owns no lifecycle: ``ConnectionStateMachine`` (and the ``ExchangeStateMachine`` of the exchange in
/// progress) decides, and this handler performs the actions it returns — reads, writes, connects, timers.
///
/// Backpressure without locks (data-plane pitfall 7): this is the last handler, so it sees every `read()` and
/// withholds it while the exchange cannot take more request bytes (no upstream yet, or the upstream is not
/// writable); the upstream side withholds its reads while this client is not writable.
package final class ProxyConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    package let server: ProxyServerCore
    package let loop: EventLoopState
    package var context: ChannelHandlerContext!
    package var connection: ConnectionStateMachine
    /// The record of the exchange in progress (request, route, generation, access-log figures); there is one
    /// exactly while ``connection`` runs an exchange.
    var exchange: Exchange?
    /// The upstream connection the exchange in progress is using.
    package var upstream: (any UpstreamConnection)?
    var clientAddress: String?
    /// Frames what the proxy writes to the client: this handler writes bytes, never parts (``MessageFramer``).
    var framer = MessageFramer()
    /// The buffers the heads this connection writes are written into, reused from one exchange to the next: the
    /// upstream's request heads, and the client's response heads.
    var requestHeads = ReusedHeadBuffer()
    var responseHeads = ReusedHeadBuffer()
    /// A response head not yet written down the pipeline, and the small body parts appended to it since
    /// (``ProxyConnectionHandler+ClientWrites.swift``).
    var heldResponseHead: ByteBuffer?
    /// Reads the client's bytes into request parts, inline, holding those it has not read
    /// (``ProxyConnectionHandler+Decoding.swift``).
    var decoder = RequestDecoder(limits: Acceptor.headLimits)
    /// The decoder is running: a read that arrives meanwhile only adds its bytes.
    package var decoding = false

    // I/O bookkeeping, not lifecycle.
    /// Reads held back while the machine does not want them (backpressure, a token wait).
    package var reads = ReadGate()
    /// Whether the client's channel is writable, as its last writability event said (NIO tells the pipeline as soon
    /// as it changes): asked for each response body part and request sent, where asking the channel cost a retain and
    /// a release of it (#24 session 21).
    var clientWritable = true
    /// The client connection, and this upstream connection, have bytes to flush when the loop's batch of events ends
    /// (``EventBatch``); and this handler is in that batch already.
    var clientFlushBatched = false
    var upstreamFlushBatched: (any UpstreamConnection)?
    var inFlushBatch = false
    /// Response bytes were written to the client since the last flush.
    var clientNeedsFlush = false
    /// The current read delivered at least one request part (else its bytes were the start of a head).
    var readDeliveredPart = false
    /// The connection's one timer (``armTimer(for:)``) and when it fires.
    var timer: Scheduled<Void>?
    var timerFiresAt = NIODeadline.distantFuture
    /// The deadlines changed during the event being handled: the timer is armed for them when it ends.
    var timerStale = false
    /// The time as the event being handled sees it (``now``).
    var clock = EventClock()

    init(server: ProxyServerCore, loop: EventLoopState) {
        self.server = server
        self.loop = loop
        self.connection = ConnectionStateMachine(limits: Self.limits(server.timeouts), now: .now())
    }

    /// The handler has left the pipeline, and let go of ``context`` (it is set before any event, in
    /// `handlerAdded`): no timer is armed for it, a connection that arrives for it is parked, and a token or an answer
    /// that arrives for it is dropped.
    package var removed: Bool { context == nil }

    /// Now, as the event being handled sees it: read once per event (``EventClock``).
    package var now: NIODeadline {
        // The event's time when it is known, without reaching the context (a retain of it and of its loop).
        if let current = clock.current { return current }
        return clock.now(context.eventLoop)
    }

    static func limits(_ timeouts: ProxyTimeouts) -> ConnectionStateMachine.Limits {
        .init(idle: timeouts.clientIdle, requestHead: timeouts.requestHead, bodyStall: timeouts.bodyStall)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        clientAddress = context.channel.remoteAddress?.ipAddress
        clientWritable = context.channel.isWritable
        server.metrics.activeConnections.increment()
        connection = ConnectionStateMachine(limits: Self.limits(server.timeouts), now: context.eventLoop.now)
        updateTimer()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        // The context holds this handler and this handler held the context: a cycle NIO does not break, which kept
        // every client connection's handler — and all it held — alive after its connection closed (#24 session 17:
        // 3 KiB per connection; HandlerLifetimeTests, ConnectionMemoryTests). Nothing runs on it once removed: its
        // timer is cancelled and never armed again, and the callbacks that outlive an event check ``removed``.
        self.context = nil
        // The connection machine's own illegal events (the exchange's are counted as they abort).
        if connection.illegalEvents > 0 {
            server.metrics.stateErrors(machine: "connection").increment(by: Int64(connection.illegalEvents))
        }
        // A connection that became a tunnel is still open: the tunnel counts it out when it ends.
        if case .tunnelled = connection.state { return }
        server.metrics.activeConnections.decrement()
    }

    // MARK: Client → proxy

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard connection.decodes else { return }
        enterEvent()
        defer { leaveEvent() }
        receive(unwrapInboundIn(data))
    }

    /// A request part the decoder read.
    func received(_ part: ClientRequestPart) {
        readDeliveredPart = true
        if case .deliver(let part) = connection.received(part) { dispatch(part) }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        enterEvent()
        defer { leaveEvent() }
        // The time only matters when the read made no request part (a head begun): read it only then.
        connection.readComplete(deliveredPart: readDeliveredPart, now: now)
        readDeliveredPart = false
        updateTimer()
    }

    package func read(context: ChannelHandlerContext) {
        if connection.isLingering { return context.read() }
        if reads.admit(open: wantsRead) { context.read() }
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        clientWritable = context.channel.isWritable
        if clientWritable { upstream?.resumeReads() }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        // A head still in pieces is parsed once more, so a malformed one is refused for what it is (and counted).
        decodeInbound(seenEOF: true)
        run(connection.clientClosed())
        if upstream != nil {
            // The machine keeps no connection past its client; one still held here is a bug, and is let go.
            server.metrics.stateErrors(machine: "exchange").increment()
            closeUpstreamConnection()
        }
        cancelTimer()
        exchange = nil
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closeClient()
    }

    /// The decoder refused the client's bytes: a ``HeadError`` is answered in its own slot, then the connection
    /// closes (the byte stream can no longer be trusted to find the next request; RFC 9112 §9.3.2), and is counted
    /// by reason whether or not it is answered; anything else (more bytes held than
    /// ``RequestDecoder/bufferLimit(_:)``) closes the connection.
    func decodeFailed(_ error: any Error) {
        guard let refusal = error as? HeadError else {
            return run(connection.decoderFailed(nil, now: now))
        }
        server.metrics.requestsRefused(reason: refusal.label).increment()
        let answer = ConnectionStateMachine.Refusal(problem: ProxyError(refusal: refusal), label: refusal.label)
        run(connection.decoderFailed(answer, now: now))
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            run(connection.quiesce())
        } else if event is ConnectionLimiter.RoomWanted {
            run(connection.closeIfIdle())
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func dispatch(_ part: ClientRequestPart) {
        switch part {
        case .head(let request): begin(request)
        case .body(let buffer): requestBody(buffer)
        case .end: requestEnd()
        }
    }

    /// Whether to let the next `read()` through.
    var wantsRead: Bool {
        connection.wantsRead(upstreamWritable: upstream?.isWritable ?? false)
    }

    /// Lets a withheld `read()` through if the state now allows it.
    func updateReading() {
        if reads.release(open: wantsRead) { context.read() }
    }

    // MARK: Request parts

    private func requestBody(_ buffer: ByteBuffer) {
        exchange?.bytesIn += buffer.readableBytes
        let now = self.now
        run(connection.exchangeEvent { $0.requestBody(buffer, now: now) })
    }

    /// The client's request ended. Its trailers are dropped, never forwarded (SPEC §8): they would be a second
    /// header section that none of the head's checks saw — `Authorization`, the client key, `X-Forwarded-*` — and
    /// a recipient may discard trailer fields anyway (RFC 9110 §6.5.1).
    private func requestEnd() {
        let now = self.now
        run(connection.exchangeEvent { $0.requestEnd(now: now) })
    }

    // MARK: Running actions

    /// Performs what the connection's machine asked for: every action of every event, in this one place. `arrived`
    /// is the upstream connection that the event delivered (``ExchangeStateMachine/Action/sendRequest(body:end:)``
    /// sends on it, ``ExchangeStateMachine/Action/parkConnection`` keeps it for later). `record` and `inUse` are the
    /// exchange's record and its upstream connection when the event's caller holds them already (a response part):
    /// passed down rather than read again from this handler's properties, which costs a retain and a release each
    /// (bench/counts.sh).
    package func run(
        _ action: ConnectionStateMachine.Action, arrived: (any UpstreamConnection)? = nil,
        record given: Exchange? = nil,
        inUse givenUpstream: (any UpstreamConnection)? = nil
    ) {
        switch action {
        case .exchange(let action):
            perform(action, arrived: arrived, record: given, inUse: givenUpstream)
        case .none:
            break
        case .deliver(let part):
            dispatch(part)
        case .deliverQueued:
            deliverQueued()
        case .responseHead(let action, let token, let stepUpAnswered):
            if let exchange = given ?? exchange { hear(token, stepUpAnswered: stepUpAnswered, exchange: exchange) }
            perform(action, arrived: arrived, record: given, inUse: givenUpstream)
        case .refuse(let action, let refusal):
            if exchange == nil {
                // The record of the exchange the machine began for the head that never arrived in full.
                exchange = Exchange(
                    id: loop.nextRequestID(), unparsed: RequestLine(method: .GET, uri: "/", version: .http1_1))
            }
            exchange?.refusal = refusal
            perform(action)
        case .close(let closing):
            switch closing {
            case .afterResponse:
                closeLingering(after: (given ?? exchange)?.responseWritten)
            case .idle:
                server.logger.debug(
                    "closing an idle client connection", metadata: ["client": "\(clientAddress ?? "-")"])
                closeClient()
            case .roomWanted:
                server.metrics.idleClosedAtLimit.increment()
                closeClient()
            case .quiescing, .unreadable, .illegalEvent:
                closeClient()
            }
        }
    }

    /// Performs what the exchange's machine asked for (``run(_:arrived:record:inUse:)``).
    private func perform(
        _ action: ExchangeStateMachine.Action, arrived: (any UpstreamConnection)? = nil, record given: Exchange? = nil,
        inUse givenUpstream: (any UpstreamConnection)? = nil
    ) {
        switch action {
        case .none:
            break
        case .forwardBody(let body):
            // A body part comes with a read of the client's, whose completion re-arms the timer.
            guard let upstream else { return }
            upstream.write(body)
            flushUpstreamAtBatchEnd(upstream)
            return
        case .consumeLocally(let body):
            exchange?.localBody?.append(body)
            return
        case .forwardResponseBody(let body):
            if let given { given.bytesOut += body.readableBytes } else { exchange?.bytesOut += body.readableBytes }
            write(.body(body), promise: nil)
            clientNeedsFlush = true
            if !clientWritable { upstream?.pauseReads() }
            return
        case .forwardEnd:
            guard let upstream else { break }
            upstream.end()
            flushUpstreamAtBatchEnd(upstream)
        case .answerLocally(let ticket):
            answerLocally(ticket)
        case .fetchToken(let ticket, let claims):
            fetchToken(ticket, claims: claims)
        case .connect(let ticket):
            connect(ticket)
        case .sendRequest(let body, let end):
            guard let arrived else { return abort() }
            send(on: arrived, body: body, end: end)
        case .parkConnection:
            arrived?.release(reuse: true, now: now)
        case .forwardInformational(let status):
            guard let exchange else { break }
            let informational = HTTPResponseHead(version: exchange.request.version, status: status)
            write(.head(ResponseHeadBytes.bytes(informational), chunked: false), promise: nil, flush: true)
        case .sendContinue:
            guard let exchange else { break }
            let continued = HTTPResponseHead(version: exchange.request.version, status: .continue)
            write(.head(ResponseHeadBytes.bytes(continued), chunked: false), promise: nil, flush: true)
        case .forwardResponseHead(let head, let keepAlive):
            if let given {
                forwardResponseHead(head, keepAlive: keepAlive, exchange: given)
            } else if let exchange {
                forwardResponseHead(head, keepAlive: keepAlive, exchange: exchange)
            }
        case .forwardRejection(let head, let keepAlive, let body):
            guard let exchange = given ?? exchange else { break }
            forwardResponseHead(head, keepAlive: keepAlive, exchange: exchange)
            for part in body {
                exchange.bytesOut += part.readableBytes
                write(.body(part), promise: nil)
            }
            // It may come with the timer rather than a read of the upstream's, whose completion would send it.
            writeHeldResponseHead()
            flushClientAtBatchEnd()
            clientNeedsFlush = false
            if !clientWritable { upstream?.pauseReads() }
        case .finishResponse(let trailers, let fate, let then):
            if let givenUpstream {
                release(givenUpstream, fate)
            } else if let upstream {
                release(upstream, fate)
            }
            clientNeedsFlush = false
            if let given {
                writeResponseEnd(given, trailers: trailers, then: then)
            } else if let exchange {
                writeResponseEnd(exchange, trailers: trailers, then: then)
            }
        case .replayWithNewToken(let fate, let retry, let ticket):
            if let upstream { release(upstream, fate) }
            replay(retry: retry, ticket: ticket)
        case .answer(let answer, let keepAlive, let closeUpstream, let then):
            if closeUpstream { closeUpstreamConnection() }
            write(answer, keepAlive: keepAlive, then: then)
        case .closeConnection(let closeUpstream):
            if closeUpstream { closeUpstreamConnection() }
            closeClient()
        case .switchProtocols(let head):
            // WebSocket's handshake is HTTP/1.1's (RFC 6455 §4): the tunnel takes that connection's channel over.
            guard let exchange, let binding = exchange.binding, let upstream = upstream as? UpstreamHandler else {
                return abort()
            }
            switchProtocols(head, exchange: exchange, binding: binding, upstream: upstream)
        case .finish(let close):
            finishExchange(close: close)
        case .abandon(let closeUpstream, let responseEnded):
            // The client left: whatever the upstream was doing for it is no longer wanted (and must not be pooled,
            // as its response may be half-read). Logged with the status it was sent — a client may close once it
            // has read a head (lftp, w3m and busybox wget do after a 200 or a 302) — or, when no head reached it,
            // as 499, as nginx and Caddy count a client that went away before its answer.
            if closeUpstream { closeUpstreamConnection() }
            if let exchange {
                let headSent = exchange.status != 0 && heldResponseHead == nil
                record(exchange, status: responseEnded || headSent ? exchange.status : 499)
            }
            exchange = nil
            return
        case .abort:
            return abort()
        }
        updateTimer()
    }

    /// A machine met an event that cannot happen in its state: a bug, so it is counted and both connections close —
    /// never a silent hang.
    private func abort() {
        server.metrics.stateErrors(machine: "exchange").increment()
        closeUpstreamConnection()
        closeClient()
    }

    /// Writes the proxy's own complete answer for the current exchange (SPEC §8).
    private func write(_ answer: ExchangeStateMachine.Answer, keepAlive: Bool, then: ExchangeStateMachine.AfterResponse)
    {
        guard let exchange else { return }
        let response: LocalResponse
        switch answer {
        case .response(let local):
            response = local
        case .problem(let error):
            response = problem(error, for: exchange)
        case .failure(let failure):
            response = problem(
                failure.problem(binding: exchange.binding, bodyStall: server.timeouts.bodyStall), for: exchange)
        }
        var head = HTTPResponseHead(
            version: exchange.request.version, status: response.status, headers: response.headers)
        head.headers.add(name: "x-request-id", value: exchange.id)
        if let origin = exchange.corsOrigin { CORS.apply(origin: origin, to: &head.headers) }
        if !keepAlive {
            head.headers.add(name: "connection", value: "close")
        } else if exchange.request.version.minor == 0 {
            head.headers.add(name: "connection", value: "keep-alive")
        }
        exchange.status = UInt(response.status.code)
        write(.head(ResponseHeadBytes.bytes(head), chunked: false), promise: nil)
        if exchange.request.method != .HEAD {
            exchange.bytesOut += response.body.readableBytes
            write(.body(response.body), promise: nil)
        }
        writeResponseEnd(exchange, trailers: nil, then: then)
    }

    private func problem(_ error: ProxyError, for exchange: Exchange) -> LocalResponse {
        server.logger.debug(
            "request refused",
            metadata: ["request-id": "\(exchange.id)", "status": "\(error.status.code)", "problem": "\(error.type)"])
        return .problem(error, requestID: exchange.id)
    }

    /// Writes the response's end, then goes on as `then` says; keeps a future for the write only when the
    /// connection may close after it.
    func writeResponseEnd(
        _ exchange: Exchange, trailers: ByteBuffer?, then: ExchangeStateMachine.AfterResponse
    ) {
        if then == .finished(close: false) {
            // The connection stays open: nothing waits on this flush but the client (``EventBatch``).
            write(.end(trailers: trailers), promise: nil)
            flushClientAtBatchEnd()
        } else {
            let promise = context.eventLoop.makePromise(of: Void.self)
            exchange.responseWritten = promise.futureResult
            write(.end(trailers: trailers), promise: promise, flush: true)
        }
        switch then {
        case .finished(let close): finishExchange(close: close)
        case .awaitingRequestEnd: updateReading()
        }
        updateTimer()
    }

    /// The exchange is over on both sides: close, or move on to the next request.
    func finishExchange(close: Bool) {
        guard let exchange else { return }
        record(exchange, status: exchange.status)
        self.exchange = nil
        run(connection.exchangeFinished(close: close, now: now), record: exchange)
    }

    /// Takes what was queued while the exchange that ended was in progress: the pipelined requests' parts, and then
    /// a later request's refusal in its turn.
    private func deliverQueued() {
        while true {
            let next = connection.nextQueued(now: now)
            switch next {
            case .none:
                return updateReading()
            case .refuse:
                return run(next)
            default:
                run(next)
            }
        }
    }

    /// What the upstream's answer says of the route's token, heard by its source once the exchange has taken the
    /// head: a discovered route's flow hears the token was answered (`status` shows it), or the token is dropped for
    /// a step-up, so that a step-up sign-in made meanwhile (`login ROUTE --scopes`) is taken up by the next request.
    private func hear(_ effect: TokenVerdict.TokenEffect, stepUpAnswered: Bool, exchange: Exchange) {
        let binding = exchange.binding
        if let token = exchange.token {
            switch effect {
            case .none:
                break
            case .answered:
                exchange.tokens?.answered(token)
            case .dropForStepUp(let scopes):
                if let key = binding?.tokenKey { exchange.tokens?.drop(key, token: token, wanting: scopes) }
                server.logger.info(
                    "step-up required: the upstream answered 403 insufficient_scope",
                    metadata: [
                        "request-id": "\(exchange.id)", "route": "\(binding?.route.prefix ?? "")",
                        "scopes": "\(scopes.joined(separator: " "))",
                    ])
            }
        }
        // A step-up waited for is counted when its sign-in ends (``fetchStepUpToken``).
        if stepUpAnswered, let route = binding?.route.prefix {
            server.metrics.stepUp(route: route, outcome: "answered")
        }
    }

    /// Counts a finished (or abandoned) exchange in the metrics and writes its access-log line.
    package func record(_ exchange: Exchange, status: UInt) {
        exchange.end()
        loop.metrics(for: exchange.routeLabel, in: server.metrics).record(
            method: RouteMetrics.methodLabel(exchange.request.method.rawValue), status: status,
            bytesIn: exchange.bytesIn, bytesOut: exchange.bytesOut, upstream: exchange.upstreamLatency)
        AccessLog.record(exchange, status: status, logger: server.logger)
    }
}
