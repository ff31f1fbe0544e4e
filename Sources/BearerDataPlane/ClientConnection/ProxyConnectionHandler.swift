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
///
/// The client is one of two wires: an HTTP/1.1 connection, whose pipeline this handler ends, or one stream of an
/// HTTP/2 connection (``HTTP2ClientStream``), which calls the same steps from its connection's
/// ``HTTP2StreamTable`` — no pipeline, no channel of its own (docs/benchmarks.md) — and takes the response as parts.
final class ProxyConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: ProxyServerCore
    private let loop: EventLoopState
    /// The HTTP/1.1 client's pipeline; nil on a stream, and once the handler has left the pipeline.
    private var context: ChannelHandlerContext!
    /// The HTTP/2 stream this handler serves, until it has ended (``streamClosed()``).
    private var clientStream: HTTP2ClientStream?
    /// The stream has ended, and the handler lets go of it once the loop's batch of events is over (``flushBatched()``);
    /// never unset.
    private var streamEnded = false
    private var connection: ConnectionStateMachine
    /// The record of the exchange in progress (request, route, generation, access-log figures); there is one
    /// exactly while ``connection`` runs an exchange.
    private var exchange: Exchange?
    /// The upstream connection the exchange in progress is using.
    private var upstream: (any UpstreamConnection)?
    private var clientAddress: String?
    /// What the proxy writes to the client: framed bytes, never parts, a small response as one write.
    private var writer = ClientWriter()
    /// The buffers the upstream's request heads are written into, reused from one exchange to the next.
    private var requestHeads = ReusedHeadBuffer()
    /// Reads the client's bytes into request parts, inline, holding those it has not read
    /// (see "The client's bytes read into request parts" below).
    private var decoder = RequestDecoder(limits: Acceptor.headLimits)
    /// The decoder is running: a read that arrives meanwhile only adds its bytes.
    private var decoding = false

    // I/O bookkeeping, not lifecycle.
    /// Reads held back while the machine does not want them (backpressure, a token wait).
    private var reads = ReadGate()
    /// Whether the client's channel is writable, as its last writability event said (NIO tells the pipeline as soon
    /// as it changes): asked for each response body part and request sent, where asking the channel cost a retain and
    /// a release of it (bench/counts.sh).
    private var clientWritable = true
    /// The client connection, and this upstream connection, have bytes to flush when the loop's batch of events ends
    /// (``EventBatch``); and this handler is in that batch already.
    private var clientFlushBatched = false
    private var upstreamFlushBatched: (any UpstreamConnection)?
    private var inFlushBatch = false
    /// Response bytes were written to the client since the last flush.
    private var clientNeedsFlush = false
    /// The current read delivered at least one request part (else its bytes were the start of a head).
    private var readDeliveredPart = false
    /// The connection's one timer, for all its time limits (``ConnectionTimer``).
    private var timer = ConnectionTimer()
    /// The time as the event being handled sees it (``now``).
    private var clock = EventClock()

    /// The handler serves one stream of an HTTP/2 connection (``HTTP2StreamTable``): it is not counted in
    /// `bearer_proxy_active_connections` (the connection is, once).
    private let servesStream: Bool

    /// A handler for an HTTP/1.1 connection, added to its pipeline.
    init(server: ProxyServerCore, loop: EventLoopState) {
        self.server = server
        self.loop = loop
        self.servesStream = false
        self.connection = ConnectionStateMachine(limits: Self.limits(server.timeouts), now: .now())
    }

    /// A handler for `stream`, started with ``streamStarted(clientAddress:writable:)``.
    init(server: ProxyServerCore, loop: EventLoopState, stream: HTTP2ClientStream) {
        self.server = server
        self.loop = loop
        self.servesStream = true
        self.clientStream = stream
        self.connection = ConnectionStateMachine(limits: Self.limits(server.timeouts), now: .now())
    }

    /// The handler has left the pipeline and let go of ``context`` (it is set before any event, in `handlerAdded`),
    /// or its stream has ended: no timer is armed for it, a connection that arrives for it is parked, and a token or
    /// an answer that arrives for it is dropped.
    private var removed: Bool { context == nil && clientStream == nil }

    /// Now, as the event being handled sees it: read once per event (``EventClock``).
    private var now: NIODeadline {
        // The event's time when it is known, without reaching the context (a retain of it and of its loop).
        if let current = clock.current { return current }
        return clock.now(loop.eventLoop)
    }

    private static func limits(_ timeouts: ProxyTimeouts) -> ConnectionStateMachine.Limits {
        .init(idle: timeouts.clientIdle, requestHead: timeouts.requestHead, bodyStall: timeouts.bodyStall)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        start(clientAddress: context.channel.remoteAddress?.ipAddress, writable: context.channel.isWritable)
    }

    private func start(clientAddress: String?, writable: Bool) {
        self.clientAddress = clientAddress
        clientWritable = writable
        if !servesStream { server.metrics.activeConnections.increment() }
        connection.started(now: loop.eventLoop.now)
        updateTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        detach()
    }

    /// The client is gone for good: the handler lets go of it and of everything it refers to.
    private func detach() {
        cancelTimer()
        // The context holds this handler and this handler held the context: a cycle NIO does not break, which would
        // keep every client connection's handler — and all it held — alive after its connection closed (about 3 KiB per
        // connection; HandlerLifetimeTests, ConnectionMemoryTests). Nothing runs on it once removed: its timer is
        // cancelled and never armed again, and the callbacks that outlive an event check ``removed``.
        self.context = nil
        clientStream = nil
        // The connection machine's own illegal events (the exchange's are counted as they abort).
        if connection.illegalEvents > 0 {
            server.metrics.stateErrors(machine: "connection").increment(by: Int64(connection.illegalEvents))
        }
        // A connection that became a tunnel is still open: the tunnel counts it out when it ends.
        if case .tunnelled = connection.state { return }
        if !servesStream { server.metrics.activeConnections.decrement() }
    }

    // MARK: Client → proxy

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        clientRead(unwrapInboundIn(data))
    }

    private func clientRead(_ bytes: ByteBuffer) {
        guard connection.decodes else { return }
        enterEvent()
        defer { leaveEvent() }
        receive(bytes)
    }

    /// A request part the decoder read.
    /// `consuming`: the part moves into the action that delivers it, rather than being copied (a retain of each
    /// buffer it holds).
    private func received(_ part: consuming ClientRequestPart) {
        readDeliveredPart = true
        if case .deliver(let part) = connection.received(part) { dispatch(part) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        clientReadComplete()
    }

    private func clientReadComplete() {
        enterEvent()
        defer { leaveEvent() }
        // The time only matters when the read made no request part (a head begun): read it only then.
        connection.readComplete(deliveredPart: readDeliveredPart, now: now)
        readDeliveredPart = false
        updateTimer()
    }

    func read(context: ChannelHandlerContext) {
        if connection.isLingering { return context.read() }
        if reads.admit(open: wantsRead) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        clientWritabilityChanged(context.channel.isWritable)
    }

    private func clientWritabilityChanged(_ writable: Bool) {
        clientWritable = writable
        if clientWritable { upstream?.resumeReads() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientInactive()
    }

    private func clientInactive() {
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

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closeClient()
    }

    /// The decoder refused the client's bytes: a ``HeadError`` is answered in its own slot, then the connection
    /// closes (the byte stream can no longer be trusted to find the next request; RFC 9112 §9.3.2), and is counted
    /// by reason whether or not it is answered; anything else (more bytes held than
    /// ``RequestDecoder/bufferLimit(_:)``) closes the connection.
    private func decodeFailed(_ error: any Error) {
        guard let refusal = error as? HeadError else {
            return run(connection.decoderFailed(nil, now: now))
        }
        server.metrics.requestsRefused(reason: refusal.label).increment()
        let answer = ConnectionStateMachine.Refusal(problem: ProxyError(refusal: refusal), label: refusal.label)
        run(connection.decoderFailed(answer, now: now))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            quiesce()
        } else if event is ConnectionLimiter.RoomWanted {
            run(connection.closeIfIdle())
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func quiesce() {
        run(connection.quiesce(now: now))
    }

    private func dispatch(_ part: ClientRequestPart) {
        switch part {
        case .head(let request): begin(request)
        case .body(let buffer): requestBody(buffer)
        case .end: requestEnd()
        }
    }

    /// Whether to let the next `read()` through.
    private var wantsRead: Bool {
        connection.wantsRead(upstreamWritable: upstream?.isWritable ?? false)
    }

    /// Lets a withheld `read()` through if the state now allows it.
    private func updateReading() {
        guard reads.release(open: wantsRead) else { return }
        if let clientStream { clientStream.read() } else { context?.read() }
    }

    // MARK: Request parts

    private func requestBody(_ buffer: ByteBuffer) {
        exchange?.bytesIn += buffer.readableBytes
        let now = self.now
        run(connection.exchangeEvent(now: now) { $0.requestBody(buffer, now: now) })
    }

    /// The client's request ended. Its trailers are dropped, never forwarded (SPEC §8): they would be a second
    /// header section that none of the head's checks saw — `Authorization`, the client key, `X-Forwarded-*` — and
    /// a recipient may discard trailer fields anyway (RFC 9110 §6.5.1).
    private func requestEnd() {
        let now = self.now
        run(connection.exchangeEvent(now: now) { $0.requestEnd(now: now) })
    }

    // MARK: Running actions

    /// Performs what the connection's machine asked for: every action of every event, in this one place. `arrived`
    /// is the upstream connection that the event delivered (``ExchangeStateMachine/Action/sendRequest(body:end:)``
    /// sends on it, ``ExchangeStateMachine/Action/parkConnection`` keeps it for later). `record` and `inUse` are the
    /// exchange's record and its upstream connection when the event's caller holds them already (a response part):
    /// passed down rather than read again from this handler's properties, which costs a retain and a release each
    /// (bench/counts.sh).
    private func run(
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
                let headSent = exchange.status != 0 && !writer.holdsHead
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
        // A gRPC client reads the proxy's own answers as gRPC statuses, not problem+json.
        if let request = exchange.received, LocalResponse.isGRPC(contentTypes: request.values("content-type")) {
            return .grpcProblem(error, requestID: exchange.id)
        }
        return .problem(error, requestID: exchange.id)
    }

    /// Writes the response's end, then goes on as `then` says; keeps a future for the write only when the
    /// connection may close after it.
    private func writeResponseEnd(
        _ exchange: Exchange, trailers: ByteBuffer?, then: ExchangeStateMachine.AfterResponse
    ) {
        if then == .finished(close: false) {
            // The connection stays open: nothing waits on this flush but the client (``EventBatch``).
            write(.end(trailers: trailers), promise: nil)
            flushClientAtBatchEnd()
        } else {
            let promise = loop.eventLoop.makePromise(of: Void.self)
            exchange.responseWritten = promise.futureResult
            write(.end(trailers: trailers), promise: promise, flush: true)
        }
        switch then {
        case .finished(let close): finishExchange(close: close)
        case .awaitingRequestEnd: updateReading()
        }
        updateTimer()
    }

    /// The exchange is over on both sides, and the connection has decided (`close`, the action that ended it):
    /// close once the answer is written, or move on to what is queued.
    private func finishExchange(close: Bool) {
        guard let exchange else { return }
        record(exchange, status: exchange.status)
        self.exchange = nil
        if close { return closeLingering(after: exchange.responseWritten) }
        deliverQueued()
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
    private func record(_ exchange: Exchange, status: UInt) {
        exchange.end()
        loop.metrics(for: exchange.routeLabel, in: server.metrics).record(
            method: RouteMetrics.methodLabel(exchange.request.method.rawValue), status: status,
            bytesIn: exchange.bytesIn, bytesOut: exchange.bytesOut, upstream: exchange.upstreamLatency)
        AccessLog.record(exchange, status: status, logger: server.logger)
    }
}

/// The client's bytes read into request parts by ``RequestDecoder`` inline, rather than by a `ByteToMessageHandler`
/// before this handler: a part that crossed the pipeline as a `NIOAny` cost a dynamic cast and a generic-metadata
/// lookup, and the handler's own bookkeeping more (docs/benchmarks.md).
///
/// What the `ByteToMessageHandler` did, done here: bytes that arrive while the decoder runs (a read delivered
/// synchronously) are added and decoded by the run in progress; a refusal, or the client leaving, stops the reading
/// for good (``ConnectionStateMachine/Reading``); at the end of the input a head in pieces is parsed once more.
extension ProxyConnectionHandler {
    /// Decodes what `bytes` adds to what the decoder holds, handing each part on (``received(_:)``).
    private func receive(_ bytes: ByteBuffer) {
        decoder.append(bytes)
        decodeInbound(seenEOF: false)
    }

    /// Runs the decoder until it needs more bytes; `seenEOF` at the end of the input.
    private func decodeInbound(seenEOF: Bool) {
        guard !decoding, connection.decodes else { return }
        decoding = true
        defer { decoding = false }
        do {
            while let part = try decoder.next(seenEOF: seenEOF) {
                received(part)
                if !connection.decodes { return }
            }
        } catch {
            decodeFailed(error)
        }
    }
}

/// What answers a request: a refusal, a preflight, one of the proxy's own endpoints, or a route's upstream with
/// its token (SPEC §8, §9).
extension ProxyConnectionHandler {
    private func begin(_ request: ClientRequest) {
        let head = request.line
        let id = Self.clientRequestID(request) ?? loop.nextRequestID()
        let installed = server.installed.beginExchange()
        let exchange = Exchange(id: id, request: request, proxy: installed, started: now)
        self.exchange = exchange
        let upgrade = WebSocketUpgrade.requested(request)
        let began = connection.begin(
            ExchangeStateMachine.Request(
                method: head.method, keepAlive: request.keepAlive, expectsContinue: exchange.expectsContinue,
                upgrade: upgrade, forwardsInformational: head.version.minor >= 1,
                callLimit: GRPCTimeout.limit(of: request)),
            now: now)
        // A head while an exchange is in progress (the machine queues those): a bug, counted when the connection
        // ends, and the connection closes rather than answer two requests at once.
        guard began == .none else { return run(began) }
        guard let proxy = installed else { return decide(.answer(.problem(.starting))) }
        let target: RequestTarget
        switch proxy.requestGuard.check(request) {
        case .refuse(let error):
            return refuseHead(error)
        case .preflight(let origin, let method, let requestedHeaders):
            return decide(.answer(.response(CORS.preflight(origin: origin, method: method, headers: requestedHeaders))))
        case .allow(let allowed, let corsOrigin):
            target = allowed
            exchange.target = allowed
            exchange.corsOrigin = corsOrigin
        }
        if LocalEndpointPaths.owns(target.path) {
            exchange.routeLabel = "-"
            exchange.localBody = LocalBody()
            return decide(.local)
        }
        // Root-level OAuth metadata for a discovered route (RFC 9728 §3.1): never forwarded — not even to a `/`
        // route — nor answered, so a local client starts no OAuth of its own (SPEC §6.3).
        if let resource = DiscoveredRouteGate.insertedResourcePath(target.path),
            let owner = proxy.configuration.routes.match(path: resource[...]),
            proxy.bindings[owner.position].isDiscovered
        {
            exchange.routeLabel = proxy.bindings[owner.position].route.prefix
            return refuseHead(.oauthMetadataNotForwarded(route: proxy.bindings[owner.position].route.prefix))
        }
        guard let match = proxy.configuration.routes.match(path: target.path) else {
            return refuseHead(Self.noRoute(target.path, bindings: proxy.bindings))
        }
        let binding = proxy.bindings[match.position]
        // Read through the binding, not a local copy of the route: copying `Route` retains its dozen fields.
        exchange.routeLabel = binding.route.prefix
        // Before anything of the route is used — its token above all (SPEC §9).
        if let refusal = Self.routeRefusal(request, binding: binding, target: target, remainder: match.remainder) {
            return refuseHead(refusal)
        }
        exchange.route(to: binding, remainder: match.remainder, query: target.query)
        if binding.isOnBehalfOf {
            // The caller's token is the exchange's subject; the token sent is from that caller's cache alone.
            guard let subjects = binding.subjectTokens else {
                return refuseHead(.tokenMisconfigured(detail: "This on-behalf-of route has no token exchange."))
            }
            guard let subject = SubjectToken.of(request) else {
                return refuseHead(.subjectTokenMissing(route: binding.route.prefix))
            }
            exchange.callerTokens = subjects.tokens(forSubject: subject)
        }
        var cached: AccessToken?
        let sendsToken = binding.sendsToken
        if sendsToken, let key = binding.tokenKey {
            if let callerTokens = exchange.callerTokens {
                // Not the loop's memo: it keeps one token per route, and each caller has their own.
                cached = callerTokens.cachedToken(forReuse: key, presentedAs: binding.tokenType).token
            } else {
                cached = loop.cachedToken(for: binding, key: key, in: binding.tokens(proxy))
            }
            if cached != nil {
                server.metrics.tokenCacheHits.increment()
            } else {
                server.metrics.tokenCacheMisses.increment()
            }
        }
        if !sendsToken || cached != nil {
            exchange.prepare(
                client: request, token: cached, clientAddress: clientAddress, webSocket: upgrade == .webSocket,
                into: &requestHeads)
        }
        decide(
            .upstream(sendsToken: sendsToken, needsToken: sendsToken && cached == nil, limit: binding.responseTimeout))
    }

    /// The refusal of a path no route matches: an OAuth client's own sign-in fallbacks, while discovered routes sign
    /// in for their clients, are told the command that does it (a client pointed at a discovered route before its
    /// sign-in tries them, and would show the person only "no route"); anything else is no route.
    static func noRoute(_ path: Substring, bindings: [RouteBinding]) -> ProxyError {
        if DiscoveredRouteGate.isClientOAuthFallback(path) {
            let discovered = bindings.filter { $0.isDiscovered && !$0.usesAccount }.map(\.route.prefix)
            if !discovered.isEmpty { return .clientOAuthNotOffered(path: String(path), routes: discovered) }
        }
        return .noRoute(path: String(path))
    }

    /// Tells the exchange what answers its request, and runs what follows.
    private func decide(_ routing: ExchangeStateMachine.Routing) {
        let now = self.now
        run(connection.exchangeEvent(now: now) { $0.route(routing, now: now) })
    }

    /// Refuses a request for what its head says — its syntax, framing, Host, origin, route or method — before any of
    /// it goes anywhere: answers and closes, reading nothing after it (RFC 9112 §6.3). A front proxy that framed the
    /// refused request differently would have a second request hidden in what follows; and nothing the client sends
    /// after a refusal is worth the risk of reading it as a request.
    private func refuseHead(_ error: ProxyError) {
        decide(.refuse(error))
    }

    /// The slow path: no usable cached token. Reads stay paused (there is no upstream) until it is known.
    private func fetchToken(_ ticket: ExchangeStateMachine.Ticket, claims: String?) {
        guard let exchange, let binding = exchange.binding, let scopes = binding.tokenKey, let tokens = exchange.tokens
        else { return }
        let presentation = binding.tokenType
        awaitToken(ticket) { () async throws(TokenError) -> AccessToken in
            try await tokens.accessToken(for: scopes, claims: claims, presentedAs: presentation)
        }
    }

    /// Waits for the token `obtain` gets, off the event loop, and tells the exchange; `settled` hears whether it
    /// came in time for the exchange (nil when it failed).
    private func awaitToken(
        _ ticket: ExchangeStateMachine.Ticket, settled: @escaping (_ inTime: Bool?) -> Void = { _ in },
        obtain: @escaping @Sendable () async throws(TokenError) -> AccessToken
    ) {
        guard let exchange, exchange.binding != nil else { return }
        let webSocket = connection.exchange?.request.upgrade == .webSocket
        // The one bridge from the event loop into the token cache's async world; the future is consumed right
        // here, so the task it runs on is not a stray one.
        loop.eventLoop.makeFutureWithTask { () async -> Result<AccessToken, TokenError> in
            do throws(TokenError) {
                return .success(try await obtain())
            } catch {
                return .failure(error)
            }
        }
        .assumeIsolated()
        .whenSuccess { [weak self] result in
            guard let self, !self.removed else {
                // The client has left: nothing to rewrite or run, but the wait's outcome still counts (too late).
                if case .success = result { settled(false) } else { settled(nil) }
                return
            }
            switch result {
            case .success(let token):
                // Too late when the exchange has ended or was answered meanwhile (its token wait timed out): then
                // its head is not rewritten, and the machine ignores the stale ticket.
                let inTime = self.connection.exchange?.awaits(ticket) == true
                // Only a request the codec read (`received`) is routed upstream.
                if inTime, let client = exchange.received {
                    exchange.prepare(
                        client: client, token: token, clientAddress: self.clientAddress, webSocket: webSocket,
                        into: &self.requestHeads)
                }
                settled(inTime)
                self.run(self.connection.exchangeEvent(now: self.now) { $0.tokenArrived(ticket) })
            case .failure(let error):
                settled(nil)
                self.run(self.connection.exchangeEvent(now: self.now) { $0.tokenFailed(ticket, error) })
            }
        }
    }

    /// The request to one of the proxy's own endpoints has ended: answer it, now or when the answer is known.
    private func answerLocally(_ ticket: ExchangeStateMachine.Ticket) {
        guard let exchange, let proxy = exchange.proxy else { return localAnswer(ticket, .problem(.starting)) }
        let target = exchange.target
        let body = exchange.localBody ?? LocalBody()
        let request = LocalRequest(
            head: exchange.received?.headWithFields ?? exchange.request.head(), path: target?.path ?? "/-",
            query: target?.query,
            bodyLength: body.length,
            bodySHA256: body.sha256Hex)
        switch proxy.admin.response(to: request) {
        case .now(let response):
            localAnswer(ticket, .response(response))
        case .refused(let error):
            localAnswer(ticket, .problem(error))
        case .later(let answer):
            // Reads stay possible (the request has ended); the answer is written when it is known, unless the
            // client has gone by then.
            loop.eventLoop.makeFutureWithTask { await answer() }
                .assumeIsolated()
                .whenSuccess { [weak self] response in
                    guard let self, !self.removed else { return }
                    self.localAnswer(ticket, .response(response))
                }
        }
    }

    private func localAnswer(_ ticket: ExchangeStateMachine.Ticket, _ answer: ExchangeStateMachine.Answer) {
        run(connection.exchangeEvent(now: now) { $0.localAnswer(ticket, answer) })
    }

    /// What the route itself refuses about `request`, before its token is used: a required header missing, a field
    /// name imitating one the route decides, a method it does not allow (or asks for by override), or what a
    /// discovered route's gate answers.
    private static func routeRefusal(
        _ request: ClientRequest, binding: RouteBinding, target: RequestTarget, remainder: Substring
    ) -> ProxyError? {
        if let missing = binding.requiredHeaders.first(where: { !$0.isSatisfied(by: request) }) {
            return .requiredHeaderMissing(name: missing.name)
        }
        if !binding.route.headers.set.isEmpty || !binding.route.headers.remove.isEmpty,
            let imitated = RequestGuard.imitatedName(in: request, decidedBy: binding.route.headers)
        {
            // The route sets or removes that field: an `_` spelling would reach a backend that folds it into `-`.
            return .badRequest(detail: "A header name is refused: it imitates \(imitated), which this route decides.")
        }
        if let methods = binding.route.methods {
            let method = request.line.method.rawValue
            if !methods.contains(method) {
                return .methodNotAllowed(method: method, allowed: methods.sorted())
            }
            if let overridden = MethodOverride.forbidden(request: request, query: target.query, allowed: methods) {
                return .methodNotAllowed(method: overridden, allowed: methods.sorted())
            }
        }
        if binding.isDiscovered, binding.discoveredTokens == nil || DiscoveredRouteGate.isOAuthMetadata(remainder) {
            return DiscoveredRouteGate.refusal(
                prefix: binding.route.prefix, remainder: remainder, usesAccount: binding.usesAccount)
        }
        return nil
    }

    /// A client-supplied `X-Request-Id` is kept when it is short and printable, so it can be logged safely.
    private static func clientRequestID(_ request: ClientRequest) -> String? {
        // The first X-Request-Id, as the codec noted it.
        guard let range = request.parsed.requestID else { return nil }
        let value = request.string(range)
        guard (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return value
    }
}

/// `"stepUp": "auto"` (SPEC §6.3): a discovered route's `403` `insufficient_scope` is not forwarded; the route's token
/// cache asks `serve` for a sign-in for the union of the granted and the asked scopes, and the request goes again,
/// once, with that sign-in's token — as a `401` `invalid_token` does with a refreshed one (SPEC §7). The bounds on the
/// sign-ins are the control plane's (``TokenCache``'s flow); the bound on the replay is the exchange's
/// (``ExchangeStateMachine``: one replay, only with the whole body kept, within the route's limit).
extension ProxyConnectionHandler {
    /// Gets the token of a new sign-in for `scopes` for the replay `ticket`: what ``fetchToken(_:claims:)`` does,
    /// with a step-up request, counted by its outcome (`reauthorized`, or `declined` when no token came in time).
    private func fetchStepUpToken(_ ticket: ExchangeStateMachine.Ticket, scopes: [String]) {
        guard let exchange, let binding = exchange.binding, let key = binding.tokenKey, let tokens = exchange.tokens
        else { return }
        // Where the upstream asked, without the query: the unit `serve`'s step-ups are bounded by.
        let request = StepUpRequest(scopes: scopes, path: String(exchange.remainder))
        let route = binding.route.prefix
        let metrics = server.metrics
        awaitToken(ticket) { inTime in
            // Too late (the exchange was answered meanwhile: its route's limit), the next request uses it.
            metrics.stepUp(route: route, outcome: inTime == true ? "reauthorized" : "declined")
        } obtain: { () async throws(TokenError) -> AccessToken in
            try await tokens.accessToken(for: key, stepUp: request)
        }
    }
}

extension ProxyConnectionHandler: UpstreamConnectionOwner {
    // MARK: Getting a connection

    /// Sends the exchange's request on a pooled connection to its origin, or on a new one.
    private func connect(_ ticket: ExchangeStateMachine.Ticket) {
        guard let exchange, let binding = exchange.binding, exchange.isPrepared else {
            // The head is rewritten before every connect (with the cached token at routing, or when the token
            // arrives): without one there is nothing to send, so the exchange fails rather than wait unbounded.
            assertionFailure("connect without a request head")
            server.metrics.stateErrors(machine: "exchange").increment()
            return run(connection.exchangeEvent(now: now) { $0.connectFailed(ticket, .other) })
        }
        if let pooled = loop.connector.pooled(binding.origin) {
            arrived(pooled, ticket: ticket)
            return
        }
        // A new connection, on this connection's event loop (SPEC §3: same loop, no hops).
        // `self` captured strongly (no side table, see ``armTimer(for:)``): the connect is bounded by its timeout.
        loop.connector.connect(binding.origin, timeout: binding.connectTimeout, on: loop.eventLoop) { result in
            switch result {
            case .success(let upstream):
                // One that completes after the client left is kept for the next request (data-plane pitfall 6).
                guard !self.removed else { return upstream.release(reuse: true, now: .now()) }
                self.arrived(upstream, ticket: ticket)
            case .failure(let error):
                guard !self.removed else { return }
                let failure = ConnectionFailure(error)
                self.run(self.connection.exchangeEvent(now: self.now) { $0.connectFailed(ticket, failure) })
            }
        }
    }

    /// An upstream connection for `ticket` is ready: the machine says whether the exchange still wants it. One
    /// that completes after the client left is kept for the next request, never leaked (data-plane pitfall 6).
    private func arrived(_ upstream: any UpstreamConnection, ticket: ExchangeStateMachine.Ticket) {
        let now = self.now
        run(
            connection.exchangeEvent(orElse: .parkConnection, now: now) { $0.connected(ticket, now: now) },
            arrived: upstream)
    }

    /// Sends the exchange's request on `upstream`, with the body parts that arrived meanwhile and its end if it came.
    private func send(on upstream: any UpstreamConnection, body: [ByteBuffer], end: Bool) {
        guard let exchange, let head = exchange.upstreamHead, upstream.lease(to: self) else {
            // Neither new nor pooled (the pool and the connect hand out no other kind), or no head (``connect(_:)``
            // checked): a bug. The connection is not shared, and the exchange fails as a lost connection would.
            assertionFailure("an upstream connection leased twice, or no request head")
            server.metrics.stateErrors(machine: "upstream_connection").increment()
            upstream.close()
            return run(connection.exchangeEvent(now: now) { $0.upstreamClosed(neverProcessed: false, cause: .other) })
        }
        self.upstream = upstream
        exchange.upstreamSent = now
        upstream.send(head, body: body, end: end)
        flushUpstreamAtBatchEnd(upstream)
        if !clientWritable { upstream.pauseReads() }
        updateReading()
    }

    /// Lets go of the upstream connection: back to the pool, or closed.
    private func release(_ upstream: any UpstreamConnection, _ release: ExchangeStateMachine.Release) {
        self.upstream = nil
        upstream.release(reuse: release == .park, now: now)
    }

    /// Closes the upstream connection in use, if any (the exchange is answered without it).
    private func closeUpstreamConnection() {
        upstream?.close()
        upstream = nil
    }

    // MARK: Upstream → client

    /// The parts of one read of the upstream's are one event: the time is read once for all of them.
    func upstreamReading(_ upstream: any UpstreamConnection, _ deliver: () -> Void) {
        enterEvent()
        defer { leaveEvent() }
        deliver()
    }

    package func upstream(_ upstream: any UpstreamConnection, received part: UpstreamResponsePart) {
        guard upstream === self.upstream, let exchange else {
            upstream.close()
            return
        }
        enterEvent()
        defer { leaveEvent() }
        switch part {
        case .head(let head):
            let status = head.status
            if status.code / 100 != 1 || status == .switchingProtocols {
                exchange.upstreamStatus = UInt(status.code)
                exchange.upstreamLatency = exchange.upstreamSent.map { now - $0 }
            }
            var proof = TokenVerdict.Proof.none
            if exchange.sentProof, let key = exchange.sentToken?.boundKey {
                // RFC 9449 §9: an origin's nonce for the proof's key is refreshed from every answer that carries one.
                proof = .sent(newNonce: exchange.binding?.proofs?.nonce.note(head, for: key) ?? false)
            }
            let verdict = TokenVerdict.decide(
                status: status, headers: head.headers, route: exchange.binding?.tokenRoute ?? .noToken,
                granted: exchange.tokenScopes ?? [], proof: proof)
            // Only an HTTP/1.0 client can need a body delimited by the close: HTTP/1.1 ones get chunks.
            let endsWithConnection =
                exchange.request.version.minor == 0
                && Forwarding.responseFraming(head, request: exchange.request) == .untilClose
            run(
                connection.responseHead(head, endsWithConnection: endsWithConnection, verdict: verdict, now: now),
                record: exchange, inUse: upstream)
        case .body(let buffer):
            run(connection.exchangeEvent(now: now) { $0.responseBody(buffer) }, record: exchange, inUse: upstream)
        case .end(let trailers):
            let now = self.now
            run(
                connection.exchangeEvent(now: now) {
                    $0.responseEnd(trailers: Forwarding.clientTrailers(trailers), now: now)
                },
                record: exchange,
                inUse: upstream)
        }
    }

    /// Writes the upstream's response head, rewritten for the client (SPEC §8) as bytes in one pass. One whose body
    /// goes as it is (not chunked) is held back (``ClientWriter``): a small body that follows it in the same read of
    /// the upstream's goes down the pipeline with it, as one write.
    ///
    /// A stream's head goes as its header section, built from the upstream's fields directly.
    private func forwardResponseHead(_ head: UpstreamResponse, keepAlive: Bool, exchange: Exchange) {
        guard let binding = exchange.binding else { return }
        exchange.status = UInt(head.head.status)
        clientNeedsFlush = true
        let additions = Forwarding.ResponseAdditions(requestID: exchange.id, corsOrigin: exchange.corsOrigin)
        if let clientStream {
            return clientStream.writeHead(
                HTTP2ResponseFields.forwarded(head, binding: binding, adding: additions),
                informational: head.head.isInformational, promise: nil)
        }
        var out = writer.headBuffer()
        // Room for the upstream's head and the proxy's lines, so the buffer grows at most once.
        out.clear(minimumCapacity: head.head.length + 160)
        let framing = Forwarding.writeClientHead(
            head, request: exchange.request, binding: binding, adding: additions, keepAlive: keepAlive, into: &out)
        writer.writeHead(out, chunked: framing == .chunked, from: context)
    }

    /// Sends the request again, once, with a replacement for the token the upstream rejected.
    private func replay(retry: ExchangeStateMachine.TokenRetry, ticket: ExchangeStateMachine.Ticket) {
        // The configuration the exchange began with, never whatever a reload has installed since (SPEC §9).
        guard let exchange, let scopes = exchange.binding?.tokenKey else { return }
        let claims: String?
        switch retry {
        case .stepUp(let wanted):
            server.logger.info(
                "step-up: serve signs in for more scopes, then replays once",
                metadata: ["request-id": "\(exchange.id)", "scopes": "\(wanted.joined(separator: " "))"])
            return fetchStepUpToken(ticket, scopes: wanted)
        case .refresh:
            exchange.tokens?.invalidate(scopes, rejected: exchange.token ?? "")
            claims = nil
        case .claims(let requested):
            claims = requested
        case .freshProof:
            // RFC 9449 §9: the same token, with a new proof that carries the nonce the answer gave (kept by then).
            guard let token = exchange.sentToken else { return }
            server.logger.debug(
                "upstream asked for a DPoP nonce; replaying once with it", metadata: ["request-id": "\(exchange.id)"])
            return awaitToken(ticket) { token }
        }
        server.logger.debug(
            "upstream rejected the token; replaying once with a new one",
            metadata: ["request-id": "\(exchange.id)", "scopes": "\(scopes)"])
        fetchToken(ticket, claims: claims)
    }

    func upstreamReadComplete(_ upstream: any UpstreamConnection) {
        // A response that ended in this read was flushed with its end; only a partial one needs a flush here.
        if clientNeedsFlush {
            clientNeedsFlush = false
            writeHeldResponseHead()
            flushClientAtBatchEnd()
        }
    }

    func upstreamWritabilityChanged(_ upstream: any UpstreamConnection) {
        updateReading()
    }

    func upstreamClosed(_ upstream: any UpstreamConnection, error: (any Error)?, neverProcessed: Bool) {
        guard upstream === self.upstream else { return }
        self.upstream = nil
        // A connection that simply went away is a reset; any other failure (a TLS handshake, an invalid response)
        // is named for the problem the client gets.
        let cause: ConnectionFailure =
            switch error {
            case nil, is IOError, is ChannelError: .reset
            case let error as HeadError: .invalidResponse(error.label)
            case let error as ResponseDecoder.Failure: .invalidResponse(error.label)
            case is ByteToMessageDecoderError.PayloadTooLargeError: .invalidResponse("head_too_large")
            case is HTTP2UpstreamFields.Malformed: .invalidResponse("malformed_http2")
            case let error?: ConnectionFailure(error)
            }
        run(connection.exchangeEvent(now: now) { $0.upstreamClosed(neverProcessed: neverProcessed, cause: cause) })
    }
}

/// A WebSocket handshake that the upstream accepted becomes a byte tunnel (SPEC §8): the `101` goes to the client,
/// then both pipelines drop their HTTP handlers for the two ends of a ``Tunnel``.
extension ProxyConnectionHandler {
    /// The upstream answered `101 Switching Protocols` to the exchange's WebSocket handshake.
    private func switchProtocols(
        _ head: UpstreamResponse, exchange: Exchange, binding: RouteBinding, upstream: UpstreamHandler
    ) {
        exchange.status = 101
        let answer = WebSocketUpgrade.switchingProtocols(upstream: head.headers, requestID: exchange.id)
        write(.head(ResponseHeadBytes.bytes(answer), chunked: false), promise: nil)
        write(.end(trailers: nil), promise: nil, flush: true)
        // NIO's decoder is still delivering the 101 on the upstream side; its pipeline changes once that is done.
        loop.eventLoop.assumeIsolated().execute { [self] in
            becomeTunnel(exchange, binding: binding, upstream: upstream)
        }
    }

    private func becomeTunnel(_ exchange: Exchange, binding: RouteBinding, upstream: UpstreamHandler) {
        // The client may have left since the 101 was written: its handler is gone from the pipeline.
        guard !removed else { return upstream.close() }
        // An HTTP/2 stream never gets here: an upgrade is refused at translation (RFC 9113 §8.2.2).
        guard self.exchange === exchange, let context, context.channel.isActive, let upstreamChannel = upstream.channel,
            upstreamChannel.isActive
        else {
            upstream.close()
            closeClient()
            return
        }
        let clientChannel = context.channel
        let (clientEnd, upstreamEnd) = Tunnel.join(
            idleLimit: binding.tunnelIdleTimeout ?? server.timeouts.clientIdle, loop: loop.eventLoop
        ) { [self] tunnel in
            exchange.bytesIn += tunnel.bytesFromClient
            exchange.bytesOut += tunnel.bytesFromUpstream
            let illegal = tunnel.machine.illegalEvents
            if illegal > 0 { server.metrics.stateErrors(machine: "tunnel").increment(by: Int64(illegal)) }
            record(exchange, status: 101)
            if !servesStream { server.metrics.activeConnections.decrement() }
        }
        connection.tunnel()
        cancelTimer()
        self.exchange = nil
        self.upstream = nil
        upstream.detach()
        do {
            let client = clientChannel.pipeline.syncOperations
            let upstreamPipeline = upstreamChannel.pipeline.syncOperations
            try client.addHandler(clientEnd)
            try upstreamPipeline.addHandler(upstreamEnd)
            // The HTTP handlers leave. The bytes their decoders hold — frames sent right behind the handshake or
            // the 101 — go to the tunnel's ends as reads, with no read-complete after them, which is when a tunnel
            // end flushes: hence the flushes, without which a server's greeting sent with its 101 waited for the
            // next bytes from its side on two connections in three (the real clients' corpus;
            // WebSocketEarlyBytesTests).
            // Each end takes them from the handler before it (above TLS), before that handler leaves.
            upstream.forwardUndecodedBytes()
            if let bytes = decoder.takeUndecodedBytes() { context.fireChannelRead(NIOAny(bytes)) }
            _ = upstreamPipeline.removeHandler(upstream)
            _ = client.removeHandler(context: context)
            clientChannel.flush()
            upstreamChannel.flush()
            // Half-close passes through the tunnel (a FIN is an event, not the end of the connection).
            try clientChannel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
            try upstreamChannel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
        } catch {
            server.logger.debug("could not join a WebSocket tunnel", metadata: ["error": "\(error)"])
            upstreamChannel.close(promise: nil)
            clientChannel.close(promise: nil)
            return
        }
        // Reads were held back while the handshake was in flight.
        clientChannel.read()
        upstreamChannel.read()
    }
}

/// What the proxy writes to the client, through its ``ClientWriter``.
extension ProxyConnectionHandler {
    /// Writes `part` to the client, framed, and flushes when asked.
    private func write(_ part: MessagePart, promise: EventLoopPromise<Void>?, flush: Bool = false) {
        if let clientStream {
            clientStream.write(part, promise: promise)
            if flush { clientStream.flush() }
        } else {
            writer.write(part, from: context, promise: promise, flush: flush)
        }
    }

    /// Writes what the writer holds of a response (``ClientWriter``).
    private func writeHeldResponseHead() {
        if let clientStream { clientStream.writeHeld() } else { writer.writeHeld(from: context) }
    }
}

/// The flushes this connection leaves to the end of its loop's batch of events (``EventBatch``): the client's
/// response, and the request it sends upstream.
extension ProxyConnectionHandler {
    /// Flushes the client connection when the loop's batch of events ends.
    private func flushClientAtBatchEnd() {
        clientFlushBatched = true
        joinFlushBatch()
    }

    /// Flushes `upstream` when the loop's batch of events ends.
    private func flushUpstreamAtBatchEnd(_ upstream: any UpstreamConnection) {
        upstreamFlushBatched = upstream
        joinFlushBatch()
    }

    private func joinFlushBatch() {
        guard !inFlushBatch else { return }
        inFlushBatch = true
        loop.batch.flushAtEnd(self)
    }

    /// The batch has ended (``EventBatch``): what was asked for is flushed — the client's side unless its
    /// connection has gone meanwhile.
    func flushBatched() {
        inFlushBatch = false
        if let upstream = upstreamFlushBatched.take() { upstream.flush() }
        if clientFlushBatched {
            clientFlushBatched = false
            if let clientStream { clientStream.flush() } else if !removed { context.flush() }
        }
        // Once: the flag stays set, so that a close asked for while the handler lets go of the stream (its machine
        // closing on the client's departure) adds nothing, and the stream is let go of already.
        if streamEnded, clientStream != nil { streamClosed() }
    }

    /// Closes the client connection (`mode`), sending first what it wrote and left for the batch's end: a close
    /// drops whatever was written and not flushed.
    private func closeClient(mode: CloseMode = .all, promise: EventLoopPromise<Void>? = nil) {
        if let clientStream {
            if clientFlushBatched {
                clientFlushBatched = false
                clientStream.flush()
            }
            clientStream.close(promise: promise)
        } else if let context {
            close(context: context, mode: mode, promise: promise)
        } else {
            promise?.succeed()
        }
    }

    /// A close from elsewhere (the server's, a handler's before this one) sends first what was left for the batch's
    /// end, as this handler's own closes do.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if clientFlushBatched {
            clientFlushBatched = false
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }
}

/// The connection's time limits (SPEC §8), on its one ``ConnectionTimer``.
extension ProxyConnectionHandler {
    /// Makes the connection's timer fire no later than `deadline`.
    private func armTimer(for deadline: NIODeadline) {
        // A lingering close's timer is its own and stays.
        if !timer.needsArming(for: deadline) || removed || connection.isLingering { return }
        if let clientStream {
            timer.armShared(at: deadline)
            return clientStream.timerWanted(at: deadline)
        }
        // Captured strongly: nothing refers to this handler weakly, so it has no side table and its retains and
        // releases stay on the runtime's fast path. The task keeps no closed connection's handler alive: none is
        // armed once the handler has left the pipeline, and leaving cancels the one armed.
        let task = loop.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.timerFired() }
        timer.arm(task, at: deadline)
    }

    /// Makes the timer fire no later than the earliest deadline that applies now — or, inside an event, that applies
    /// once the event is over (``leaveEvent()``): an event moves the machines through several states (a request's
    /// head, its routing, its send; a response's head and end), and working out the earliest deadline after each
    /// would read both machines several times a request (docs/benchmarks.md). A deadline that applies only between two
    /// steps of one event is gone by its end, and nothing can fire in between: the loop runs nothing else meanwhile.
    private func updateTimer() {
        if clock.isInEvent {
            timer.markStale()
        } else if let next = connection.nextDeadline {
            armTimer(for: next)
        }
    }

    /// An event begins: its time is read once (``EventClock``), and the timer is armed once, when it ends.
    private func enterEvent() {
        clock.enter()
    }

    /// An event ends; the outermost's end arms the timer for the deadlines it left (``updateTimer()``).
    private func leaveEvent() {
        clock.leave()
        guard !clock.isInEvent, timer.takeStale() else { return }
        if let next = connection.nextDeadline { armTimer(for: next) }
    }

    private func cancelTimer() {
        timer.cancel()
    }

    private func timerFired() {
        timer.fired()
        let now = loop.eventLoop.now
        // Whether reads are held back matters only to an exchange's limits: asked only then.
        let withheld = connection.exchange != nil && !wantsRead
        let action = connection.deadlinesDue(now: now, readsWithheld: withheld)
        run(action)
        if case .close = action { return }
        if clientStream != nil || context?.channel.isActive == true { updateTimer() }
    }
}

/// Closing a client connection without losing its last answer.
///
/// A connection that closes with bytes of the client's still unread — the rest of a head or body the proxy refused,
/// a pipelined request after the last one — makes the kernel send RST instead of FIN, and an RST that reaches the
/// client before it has read the answer destroys the answer ("connection reset by peer"; RFC 9112 §9.6 warns of
/// exactly this). So the proxy closes as nginx's `lingering_close` does: once the answer is written it shuts down
/// its sending side (the client sees FIN after the answer), then reads and drops what the client still sends until
/// the client closes too, or for at most ``lingerLimit``.
extension ProxyConnectionHandler {
    /// The longest a closing connection keeps reading what its client still sends (nginx: `lingering_time` 30 s,
    /// `lingering_timeout` 5 s; a proxy on loopback needs far less).
    static let lingerLimit = TimeAmount.seconds(2)

    /// Closes once `written` (the answer) is done, lingering as described above; at once if there is no answer.
    private func closeLingering(after written: EventLoopFuture<Void>?) {
        // A stream's close waits for what was written, and ends only the stream: nothing to linger for.
        guard let context, let written else {
            closeClient()
            return
        }
        // The context captured, not read from the handler: it may have left the pipeline by then. Nothing is left
        // for the batch's end here: the answer was flushed when it was written, and nothing is written after it.
        written.assumeIsolated().whenComplete { [self] result in
            guard case .success = result, context.channel.isActive else {
                context.close(promise: nil)
                return
            }
            connection.linger()
            context.close(mode: .output, promise: nil)
            let limit = loop.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerLimit) {
                context.close(promise: nil)
            }
            timer.keep(limit)
            context.read()
        }
    }
}

/// The steps an HTTP/2 stream (``HTTP2ClientStream``) takes this handler through: those a pipeline takes an HTTP/1.1
/// connection's handler through, called by the stream rather than by a channel of its own.
extension ProxyConnectionHandler {
    /// The stream opened: the handler starts as a new connection's does.
    func streamStarted(clientAddress: String?, writable: Bool) {
        start(clientAddress: clientAddress, writable: writable)
    }

    /// Request bytes the stream delivered (its HEADERS and DATA as HTTP/1.1 bytes).
    func streamRead(_ bytes: ByteBuffer) {
        clientRead(bytes)
    }

    /// The stream has delivered what it had.
    func streamReadComplete() {
        clientReadComplete()
    }

    /// The stream would deliver more: let through, or withheld while the exchange cannot take more (``ReadGate``).
    func streamWantsRead() {
        if reads.admit(open: wantsRead), let clientStream { clientStream.read() }
    }

    func streamWritabilityChanged(_ writable: Bool) {
        clientWritabilityChanged(writable)
    }

    /// The server is shutting down (the connection's `ChannelShouldQuiesceEvent`).
    func streamQuiesce() {
        quiesce()
    }

    /// The stream has ended (closed by its connection, reset, or closed here): the handler lets go of it once the
    /// loop's batch of events is over, never from inside a write that ended it (NIOHTTP2 tells a stream's close as its
    /// last frame is written).
    func streamEnd() {
        guard clientStream != nil, !streamEnded else { return }
        streamEnded = true
        joinFlushBatch()
    }

    /// The connection's timer fired at `now` (``HTTP2StreamTable``): the handler's limits are checked if its deadline
    /// has come. Returns when the handler's timer fires next.
    func streamTimerReached(_ now: NIODeadline) -> NIODeadline {
        if timer.firesAt <= now { timerFired() }
        return timer.firesAt
    }

    private func streamClosed() {
        let stream = clientStream
        clientInactive()
        detach()
        stream?.handlerLeft()
    }
}
