import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension ProxyConnectionHandler: UpstreamHandlerOwner {
    // MARK: Getting a connection

    /// Sends the exchange's request on a pooled connection to its origin, or on a new one.
    func connect(_ ticket: ExchangeStateMachine.Ticket) {
        guard let leg = exchange?.leg else { return }
        if let pooled = loop.pool.take(leg.origin) {
            attach(pooled, ticket: ticket)
        } else {
            open(leg, ticket: ticket)
        }
    }

    /// Opens a new upstream connection on this connection's event loop (SPEC §3: same loop, no hops), secured as
    /// the leg's origin says — an `https` origin always carries its TLS context (``UpstreamTransport``).
    private func open(_ leg: UpstreamLeg, ticket: ExchangeStateMachine.Ticket) {
        let origin = leg.origin
        let pool = loop.pool
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(leg.proxy.timeouts.connect)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    switch origin.transport {
                    case .plain:
                        break
                    case .tls(let tls):
                        try pipeline.addHandler(
                            NIOSSLClientHandler(
                                context: tls.context, serverHostname: UpstreamTLS.serverName(for: origin.host)))
                    }
                    var encoder = HTTPRequestEncoder.Configuration()
                    encoder.automaticallySetFramingHeaders = false  // set per request (data-plane pitfall 3)
                    try pipeline.addHandler(HTTPRequestEncoder(configuration: encoder))
                    let upstream = UpstreamHandler(origin: origin)
                    try pipeline.addHandler(ResponseByteWatch(connection: upstream))
                    // `.forward` so `100 Continue` reaches the client (data-plane pitfall 2).
                    try pipeline.addHandler(
                        ByteToMessageHandler(
                            HTTPResponseDecoder(
                                leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
                    try pipeline.addHandler(upstream)
                }
            }
            .connect(host: origin.host, port: origin.port)
            .assumeIsolated()
            .whenComplete { [weak self] result in
                switch result {
                case .success(let channel):
                    guard let upstream = try? channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                    else {
                        channel.close(promise: nil)
                        return
                    }
                    upstream.onIdleClose = { [weak pool] handler in pool?.remove(handler) }
                    guard let self else { return pool.park(upstream, now: .now()) }
                    self.attach(upstream, ticket: ticket)
                case .failure(let error):
                    guard let self, self.connection.exchange?.awaits(ticket) == true else { return }
                    self.reject(
                        .upstreamUnreachable(upstream: origin.display, reason: ConnectionFailure(error).explanation))
                }
            }
    }

    /// Starts sending the request on `upstream` if the exchange still waits for it; else keeps it for later.
    private func attach(_ upstream: UpstreamHandler, ticket: ExchangeStateMachine.Ticket) {
        let now = context.eventLoop.now
        guard let exchange, let head = exchange.leg?.head,
            case .sendRequest(let body, let end)? = connection.withExchange({ $0.connected(ticket, now: now) })
        else {
            // A connect that completes after the client left is kept for the next request, never leaked
            // (data-plane pitfall 6).
            loop.pool.park(upstream, now: .now())
            return
        }
        guard upstream.lease(to: self) else {
            // Neither new nor pooled: the pool and the connect hand out no other kind, so this is a bug; the
            // connection is not shared, and the exchange fails as an unreachable upstream would.
            assertionFailure("an upstream connection leased twice")
            server.metrics.stateErrors(machine: "upstream_connection").increment()
            upstream.close()
            return reject(.upstreamUnreachable(upstream: exchange.leg?.origin.display ?? "", reason: "internal error"))
        }
        self.upstream = upstream
        exchange.upstreamSent = .now()
        upstream.write(.head(head))
        for part in body { upstream.write(.body(.byteBuffer(part))) }
        if end { upstream.write(.end(nil)) }
        upstream.flush()
        if !context.channel.isWritable { upstream.pauseReads() }
        updateReading()
        updateTimer()
    }

    /// Lets go of the upstream connection: back to the pool, or closed.
    private func release(_ upstream: UpstreamHandler, _ release: ExchangeStateMachine.Release) {
        self.upstream = nil
        upstream.release()
        switch release {
        case .park: loop.pool.park(upstream, now: .now())
        case .close: upstream.close()
        }
    }

    /// Closes the upstream connection in use, if any (the exchange is answered without it).
    func closeUpstreamConnection() {
        upstream?.close()
        upstream = nil
    }

    // MARK: Upstream → client

    func upstream(_ upstream: UpstreamHandler, received part: HTTPClientResponsePart) {
        guard upstream === self.upstream, let exchange else {
            upstream.close()
            return
        }
        switch part {
        case .head(let head):
            responseHead(head, exchange: exchange, upstream: upstream)
        case .body(let buffer):
            guard connection.forwardsResponseBody else { return }
            exchange.bytesOut += buffer.readableBytes
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            clientNeedsFlush = true
            if !context.channel.isWritable { upstream.pauseReads() }
        case .end(let trailers):
            responseEnd(trailers, exchange: exchange, upstream: upstream)
        }
    }

    private func responseHead(_ head: HTTPResponseHead, exchange: Exchange, upstream: UpstreamHandler) {
        guard let leg = exchange.leg else { return }
        let retry = head.status == .unauthorized && leg.binding.tokenKey != nil ? Self.tokenRetry(head.headers) : nil
        guard
            let action = connection.withExchange({
                $0.responseHead(status: head.status, keepAlive: head.isKeepAlive, retry: retry)
            })
        else { return }
        if head.status.code / 100 != 1 || head.status == .switchingProtocols {
            exchange.upstreamStatus = UInt(head.status.code)
            exchange.upstreamLatency = exchange.upstreamSent.map { .now() - $0 }
        }
        switch action {
        case .switchProtocols:
            switchProtocols(head, exchange: exchange, leg: leg, upstream: upstream)
        case .forwardInformational:
            var informational = HTTPResponseHead(version: exchange.request.version, status: head.status)
            informational.headers = HTTPHeaders()
            context.writeAndFlush(wrapOutboundOut(.head(informational)), promise: nil)
        case .forwardResponseHead(let keepAlive):
            var (clientHead, framing) = Forwarding.clientResponse(
                upstream: head, request: exchange.request, binding: leg.binding, requestID: exchange.id,
                keepAlive: keepAlive)
            if let origin = exchange.corsOrigin { CORS.apply(origin: origin, to: &clientHead.headers) }
            if framing == .untilClose { _ = connection.withExchange { $0.responseEndsWithConnection() } }
            exchange.status = UInt(clientHead.status.code)
            context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
            clientNeedsFlush = true
        default:
            perform(action)
        }
    }

    private func responseEnd(_ trailers: HTTPHeaders?, exchange: Exchange, upstream: UpstreamHandler) {
        let now = context.eventLoop.now
        guard let action = connection.withExchange({ $0.responseEnd(now: now) }) else { return }
        switch action {
        case .finishResponse(let fate, let then):
            release(upstream, fate)
            clientNeedsFlush = false
            writeResponseEnd(exchange, trailers: trailers, then: then)
        case .replayWithNewToken(let fate, let retry, let ticket):
            release(upstream, fate)
            replay(exchange, retry: retry, ticket: ticket)
        default:
            // A failure, or nothing: the `101`'s end while the connection becomes a tunnel (the exchange is
            // `tunnelling`), or the end of a response the exchange no longer waits for.
            if case .fail = action { closeUpstreamConnection() }
            perform(action)
        }
    }

    /// Whether `headers` of a `401` reject the token in a way one replay can fix (SPEC §7): `invalid_token`, or
    /// `insufficient_claims` with a `claims` request. Anything else, including `403 insufficient_scope`, passes
    /// through untouched (and the state machine allows the replay only once, and only with the whole body kept).
    static func tokenRetry(_ headers: HTTPHeaders) -> ExchangeStateMachine.TokenRetry? {
        guard let challenge = BearerChallenge.find(in: headers) else { return nil }
        switch challenge.error {
        case "invalid_token": return .refresh
        case "insufficient_claims": return challenge.claims.map { .claims($0) }
        default: return nil
        }
    }

    /// Sends the request again, once, with a replacement for the token the upstream rejected.
    private func replay(
        _ exchange: Exchange, retry: ExchangeStateMachine.TokenRetry, ticket: ExchangeStateMachine.Ticket
    ) {
        // The configuration the exchange began with, never whatever a reload has installed since (SPEC §9).
        guard let leg = exchange.leg, let scopes = leg.binding.tokenKey else { return }
        let claims: String?
        switch retry {
        case .refresh:
            leg.binding.tokens(leg.proxy).invalidate(scopes, rejected: leg.token ?? "")
            claims = nil
        case .claims(let requested):
            claims = requested
        }
        server.logger.debug(
            "upstream rejected the token; replaying once with a new one",
            metadata: ["request-id": "\(exchange.id)", "scopes": "\(scopes)"])
        fetchToken(ticket, claims: claims)
        updateTimer()
    }

    func upstreamReadComplete(_ upstream: UpstreamHandler) {
        // A response that ended in this read was flushed with its end; only a partial one needs a flush here.
        if clientNeedsFlush {
            clientNeedsFlush = false
            context.flush()
        }
    }

    func upstreamWritabilityChanged(_ upstream: UpstreamHandler) {
        updateReading()
    }

    func upstreamClosed(_ upstream: UpstreamHandler, error: (any Error)?, reused: Bool, answered: Bool) {
        guard upstream === self.upstream else { return }
        self.upstream = nil
        guard let action = connection.withExchange({ $0.upstreamClosed(reused: reused, sawBytes: answered) }) else {
            return
        }
        if case .fail(.upstreamClosed) = action {
            fail(.upstreamClosed, upstreamError: error)
        } else {
            perform(action)
        }
    }
}
