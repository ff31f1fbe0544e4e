import Logging
import NIOCore
import NIOExtras
import NIOHTTP1

/// Serves one client connection: routes each request, gets its token, forwards it upstream and streams the answer
/// back (SPEC §8). Confined to the connection's event loop, which is also where its upstream connections live.
///
/// Requests are handled one at a time, in order: a pipelined request that arrives early is queued and reading stops
/// until the current exchange is done (RFC 9112 §9.3.2 — responses in request order). Doing this here instead of
/// with NIO's `HTTPServerPipelineHandler` avoids two `epoll_ctl` calls per request (data-plane pitfall 1).
///
/// Backpressure without locks (data-plane pitfall 7): this is the last handler, so it sees every `read()` and
/// withholds it while the exchange cannot take more request bytes (no upstream yet, or the upstream is not
/// writable); the upstream side withholds its reads while this client is not writable.
final class ProxyConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let server: ProxyServerCore
    let loop: EventLoopState
    var context: ChannelHandlerContext!
    /// The exchange in progress.
    var exchange: Exchange?
    /// Parts of pipelined requests that arrived while an exchange was in progress.
    var queued = CircularBuffer<HTTPServerRequestPart>()
    var readPending = false
    var quiescing = false
    var upstreamNeedsFlush = false
    /// Response bytes were written to the client since the last flush.
    var clientNeedsFlush = false
    var clientAddress: String?
    /// The connection's one timer (``armTimer(for:)``) and when it fires.
    var timer: Scheduled<Void>?
    var timerFiresAt = NIODeadline.distantFuture
    /// Until when the connection may stay idle between exchanges.
    var idleDeadline: NIODeadline?
    /// The connection became one end of a WebSocket ``Tunnel`` and this handler left its pipeline.
    var tunnelled = false
    /// Until when a request head that has begun to arrive must be complete.
    var headDeadline: NIODeadline?
    /// The current read delivered at least one request part (else its bytes were the start of a head).
    var readDeliveredPart = false

    init(server: ProxyServerCore, loop: EventLoopState) {
        self.server = server
        self.loop = loop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        clientAddress = context.channel.remoteAddress?.ipAddress
        server.metrics.activeConnections.increment()
        startIdleDeadline()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        // A connection that became a tunnel is still open: the tunnel counts it out when it ends.
        if !tunnelled { server.metrics.activeConnections.decrement() }
    }

    // MARK: Client → proxy

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        readDeliveredPart = true
        if isHead(part) { headDeadline = nil }
        if !queued.isEmpty || (exchange != nil && isHead(part)) {
            queued.append(part)
            return
        }
        dispatch(part)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if upstreamNeedsFlush, case .proxied(let leg)? = exchange?.kind, let upstream = leg.upstream {
            upstream.flush()
        }
        upstreamNeedsFlush = false
        if !readDeliveredPart, exchange == nil, queued.isEmpty {
            // Bytes came in and NIO's parser made no request part of them: a request head has begun to arrive.
            startHeadDeadline()
        }
        readDeliveredPart = false
    }

    func read(context: ChannelHandlerContext) {
        if wantsRead {
            context.read()
        } else {
            readPending = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, case .proxied(let leg)? = exchange?.kind {
            leg.upstream?.resumeReads()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The client left: whatever the upstream was doing for it is no longer wanted (and must not be pooled, as
        // its response may be half-read). Counted as 499, as nginx and Caddy count a client that went away.
        if let exchange, !exchange.responseEnded { record(exchange, status: 499) }
        if case .proxied(let leg)? = exchange?.kind {
            leg.upstream?.close()
            leg.upstream = nil
        }
        cancelTimer()
        exchange = nil
        queued.removeAll()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.close(promise: nil)
            return
        }
        // A request we cannot parse: answer it if nothing has been answered yet, then close (the byte stream can
        // no longer be trusted to find the next request).
        queued.removeAll()
        let problem: ProxyError =
            parserError == .headerOverflow
            ? .headersTooLarge : .badRequest(detail: "The request is not valid HTTP/1.1 (\(parserError)).")
        answerAndClose(problem)
    }

    /// Answers `problem` for the request being read — or for the head still arriving — unless a response has
    /// started, then closes: nothing more can be read from this connection with confidence.
    func answerAndClose(_ problem: ProxyError) {
        let current =
            exchange
            ?? Exchange(
                id: loop.nextRequestID(), request: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"),
                kind: .answered)
        exchange = current
        current.requestEnded = true  // nothing more is read from this client
        current.closeAfter = true
        reject(problem)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // Graceful shutdown: finish the exchange in progress, then close; close now if idle.
            quiescing = true
            if exchange == nil { context.close(promise: nil) }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func isHead(_ part: HTTPServerRequestPart) -> Bool {
        if case .head = part { return true }
        return false
    }

    func dispatch(_ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head): begin(head)
        case .body(let buffer): requestBody(buffer)
        case .end: requestEnd()
        }
    }

    /// Whether to let the next `read()` through.
    var wantsRead: Bool {
        guard queued.isEmpty else { return false }
        guard let exchange else { return true }
        switch exchange.kind {
        case .local, .answered:
            return true
        case .proxied(let leg):
            // A WebSocket client's frames wait in the socket until the upstream has switched protocols.
            if exchange.webSocket && !exchange.responseEnded { return false }
            // After the request ends keep reading, so that a client that goes away is noticed (and a pipelined
            // request is queued). Before, only read what the upstream can take.
            if exchange.requestEnded || exchange.responseEnded { return true }
            guard let upstream = leg.upstream else { return false }
            return upstream.isWritable
        }
    }

    /// Lets a withheld `read()` through if the state now allows it.
    func updateReading() {
        if readPending && wantsRead {
            readPending = false
            context.read()
        }
    }

    // MARK: One exchange

    private func begin(_ head: HTTPRequestHead) {
        let id = Self.clientRequestID(head.headers) ?? loop.nextRequestID()
        let installed = server.installed.beginExchange()
        let exchange = Exchange(id: id, request: head, kind: .answered, proxy: installed)
        self.exchange = exchange
        startBodyDeadline(exchange)
        switch WebSocketUpgrade.requested(head) {
        case .none:
            break
        case .webSocket:
            // NIO's parser reads nothing after the handshake: the connection becomes a tunnel or closes.
            exchange.webSocket = true
            exchange.closeAfter = true
        case .other:
            exchange.closeAfter = true  // proxied as HTTP/1.1 without `Upgrade`; nothing after it can be read
        }
        guard let proxy = installed else { return reject(.starting) }
        let target: RequestTarget
        switch proxy.requestGuard.check(head) {
        case .refuse(let error):
            return reject(error)
        case .preflight(let origin, let method, let requestedHeaders):
            return respond(CORS.preflight(origin: origin, method: method, headers: requestedHeaders))
        case .allow(let allowed, let corsOrigin):
            target = allowed
            exchange.target = allowed
            exchange.corsOrigin = corsOrigin
        }
        if AdminEndpoints.owns(target.path) {
            exchange.routeLabel = "-"
            exchange.kind = .local(LocalBody())
            return
        }
        guard let match = proxy.configuration.routes.match(path: target.path) else {
            return reject(.noRoute(path: String(target.path)))
        }
        let binding = proxy.bindings[match.position]
        // Read through the binding, not a local copy of the route: copying `Route` retains its dozen fields.
        exchange.routeLabel = binding.route.prefix
        if let methods = binding.route.methods {
            if !methods.contains(head.method.rawValue) {
                return reject(.methodNotAllowed(method: head.method.rawValue, allowed: methods.sorted()))
            }
            if let overridden = MethodOverride.forbidden(headers: head.headers, query: target.query, allowed: methods) {
                return reject(.methodNotAllowed(method: overridden, allowed: methods.sorted()))
            }
        }
        let leg = UpstreamLeg(binding: binding, proxy: proxy, remainder: match.remainder, query: target.query)
        exchange.kind = .proxied(leg)
        guard let key = binding.tokenKey else {
            leg.keptBody = nil  // no token, nothing to retry
            return forward(leg, exchange: exchange, token: nil, proxy: proxy)
        }
        if let token = proxy.tokens.cachedToken(for: key) {
            server.metrics.tokenCacheHits.increment()
            forward(leg, exchange: exchange, token: token, proxy: proxy)
        } else {
            server.metrics.tokenCacheMisses.increment()
            fetchToken(key, claims: nil, proxy: proxy, exchange: exchange, leg: leg)
        }
    }

    /// Builds the upstream request with `token` and sends it.
    func forward(_ leg: UpstreamLeg, exchange: Exchange, token: AccessToken?, proxy: ProxyContext) {
        leg.tokenDeadline = nil
        leg.token = token?.value
        leg.head =
            Forwarding.upstreamRequest(
                client: exchange.request, route: leg.binding.route, remainder: leg.remainder, query: leg.query,
                authorization: token?.authorizationHeader, requestID: exchange.id, clientAddress: clientAddress,
                webSocket: exchange.webSocket
            ).head
        connect(leg)
    }

    /// The slow path: no usable cached token. Reads stay paused (the leg has no upstream) until it is known.
    func fetchToken(_ scopes: ScopeSet, claims: String?, proxy: ProxyContext, exchange: Exchange, leg: UpstreamLeg) {
        let tokens = proxy.tokens
        startTokenDeadline(leg)
        // The one bridge from the event loop into the token cache's async world; the future is consumed right
        // here, so the task it runs on is not a stray one.
        context.eventLoop.makeFutureWithTask { try await tokens.accessToken(for: scopes, claims: claims) }
            .assumeIsolated()
            .whenComplete { [weak self] result in
                // Too late when the exchange has ended or was answered meanwhile (its token wait timed out).
                guard let self, self.exchange === exchange, case .proxied(let current) = exchange.kind, current === leg
                else { return }
                switch result {
                case .success(let token): self.forward(leg, exchange: exchange, token: token, proxy: proxy)
                case .failure(let error as TokenError): self.reject(ProxyError(error))
                case .failure(let error): self.reject(.tokenUnavailable(detail: "\(error)", retryAfterSeconds: 5))
                }
            }
    }

    private func requestBody(_ buffer: ByteBuffer) {
        guard let exchange else { return }
        exchange.bytesIn += buffer.readableBytes
        startBodyDeadline(exchange)
        switch exchange.kind {
        case .local(let body):
            body.append(buffer)
        case .answered:
            break
        case .proxied(let leg):
            guard !exchange.responseEnded else { return }  // answered early: discard the rest
            leg.sentBody = true
            leg.keep(buffer)
            if let upstream = leg.upstream {
                upstream.write(.body(.byteBuffer(buffer)))
                upstreamNeedsFlush = true
            } else {
                leg.pending.append(.body(.byteBuffer(buffer)))
            }
        }
    }

    /// The client's request ended. Its trailers are dropped, never forwarded (SPEC §8): they would be a second
    /// header section that none of the head's checks saw — `Authorization`, the client key, `X-Forwarded-*` — and
    /// a recipient may discard trailer fields anyway (RFC 9110 §6.5.1).
    private func requestEnd() {
        guard let exchange else { return }
        exchange.requestEnded = true
        switch exchange.kind {
        case .local(let body):
            answerLocally(exchange, body: body)
        case .answered:
            if exchange.responseEnded { finishExchange() }
        case .proxied(let leg):
            if exchange.responseEnded { return finishExchange() }
            if let upstream = leg.upstream {
                upstream.write(.end(nil))
                upstream.flush()
                upstreamNeedsFlush = false
                leg.endForwarded = true
                startResponseTimer(leg)
            } else {
                leg.pending.append(.end(nil))
            }
        }
    }

    private func answerLocally(_ exchange: Exchange, body: LocalBody) {
        guard let proxy = exchange.proxy else { return reject(.starting) }
        let target = exchange.target
        let request = LocalRequest(
            head: exchange.request, path: target?.path ?? "/-", query: target?.query, bodyLength: body.length,
            bodySHA256: body.sha256Hex)
        switch proxy.admin.response(to: request) {
        case .now(let response):
            respond(response)
        case .refused(let error):
            reject(error)
        case .later(let answer):
            // Reads stay possible (the request has ended); the answer is written when it is known, unless the
            // client has gone by then.
            context.eventLoop.makeFutureWithTask { await answer() }
                .assumeIsolated()
                .whenSuccess { [weak self] response in
                    guard let self, self.exchange === exchange else { return }
                    self.respond(response)
                }
        }
    }

    /// Answers the current exchange with a problem (SPEC §8). Mid-response that is impossible: close instead.
    func reject(_ error: ProxyError) {
        guard let exchange else { return }
        if case .proxied(let leg) = exchange.kind {
            leg.responseDeadline = nil
            leg.upstream?.close()
            leg.upstream = nil
        }
        exchange.kind = .answered
        if exchange.responseStarted {
            context.close(promise: nil)
            return
        }
        server.logger.debug(
            "request refused",
            metadata: ["request-id": "\(exchange.id)", "status": "\(error.status.code)", "problem": "\(error.type)"])
        respond(.problem(error, requestID: exchange.id))
    }

    /// Sends a complete local response for the current exchange.
    func respond(_ response: LocalResponse) {
        guard let exchange else { return }
        if !exchange.requestEnded && exchange.expectsContinue && !exchange.sentContinue {
            // RFC 9110 §10.1.1: the client may never send the body it announced, so the connection cannot be
            // reused safely after a final answer to a request with `Expect: 100-continue`.
            exchange.closeAfter = true
        }
        var head = HTTPResponseHead(
            version: exchange.request.version, status: response.status, headers: response.headers)
        head.headers.add(name: "x-request-id", value: exchange.id)
        if let origin = exchange.corsOrigin { CORS.apply(origin: origin, to: &head.headers) }
        if !exchange.keepAlive || exchange.closeAfter || quiescing {
            head.headers.add(name: "connection", value: "close")
        } else if exchange.request.version.minor == 0 {
            head.headers.add(name: "connection", value: "keep-alive")
        }
        exchange.responseStarted = true
        exchange.status = UInt(response.status.code)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if exchange.request.method != .HEAD {
            exchange.bytesOut += response.body.readableBytes
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        }
        writeResponseEnd(exchange, trailers: nil)
        if exchange.requestEnded { finishExchange() } else { updateReading() }
    }

    /// Writes the response's end; keeps a future for it only when the connection will close after it.
    func writeResponseEnd(_ exchange: Exchange, trailers: HTTPHeaders?) {
        exchange.responseEnded = true
        let mayClose = !exchange.requestEnded || exchange.closeAfter || !exchange.keepAlive || quiescing
        if mayClose {
            let promise = context.eventLoop.makePromise(of: Void.self)
            exchange.responseWritten = promise.futureResult
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: promise)
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
        }
    }

    /// The exchange is over on both sides: close, or move on to the next request.
    func finishExchange() {
        guard let exchange else { return }
        record(exchange, status: exchange.status)
        self.exchange = nil
        if exchange.closeAfter || !exchange.keepAlive || quiescing {
            queued.removeAll()
            let context = self.context!
            if let written = exchange.responseWritten {
                written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
            return
        }
        startIdleDeadline()
        drainQueue()
        updateReading()
    }

    /// Counts a finished (or abandoned) exchange in the metrics and writes its access-log line.
    func record(_ exchange: Exchange, status: UInt) {
        loop.metrics(for: exchange.routeLabel, in: server.metrics).record(
            method: RouteMetrics.methodLabel(exchange.request.method.rawValue), status: status,
            bytesIn: exchange.bytesIn, bytesOut: exchange.bytesOut, upstream: exchange.upstreamLatency)
        AccessLog.record(exchange, status: status, logger: server.logger)
    }

    /// Delivers queued parts of pipelined requests: all of them, except that a new request waits for the exchange
    /// before it to finish.
    private func drainQueue() {
        while let part = queued.first {
            if exchange != nil, isHead(part) { return }
            queued.removeFirst()
            dispatch(part)
        }
    }

    /// A client-supplied `X-Request-Id` is kept when it is short and printable, so it can be logged safely.
    static func clientRequestID(_ headers: HTTPHeaders) -> String? {
        guard let value = headers.first(name: "x-request-id"), (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return value
    }
}
