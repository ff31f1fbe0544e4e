import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension ProxyConnectionHandler: UpstreamHandlerOwner {
    // MARK: Getting a connection

    /// Sends `leg`'s request on a pooled connection to its origin, or on a new one.
    func connect(_ leg: UpstreamLeg) {
        if let pooled = loop.pool.take(leg.origin) {
            attach(pooled, to: leg, reused: true)
        } else {
            open(leg)
        }
    }

    /// Opens a new upstream connection on this connection's event loop (SPEC §3: same loop, no hops), secured as
    /// the leg's origin says — an `https` origin always carries its TLS context (``UpstreamTransport``).
    private func open(_ leg: UpstreamLeg) {
        let origin = leg.origin
        let pool = loop.pool
        let exchange = self.exchange
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(leg.proxy.timeouts.connect)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
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
                    let watch = ResponseByteWatch()
                    try pipeline.addHandler(watch)
                    // `.forward` so `100 Continue` reaches the client (data-plane pitfall 2).
                    try pipeline.addHandler(
                        ByteToMessageHandler(
                            HTTPResponseDecoder(
                                leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .forward)))
                    try pipeline.addHandler(UpstreamHandler(origin: origin, watch: watch))
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
                    // A connect that completes after the client left is kept for the next request, never leaked
                    // (data-plane pitfall 6).
                    guard let self, let exchange, self.exchange === exchange,
                        case .proxied(let current) = exchange.kind,
                        current === leg, leg.upstream == nil
                    else {
                        pool.park(upstream, now: .now())
                        return
                    }
                    self.attach(upstream, to: leg, reused: false)
                case .failure(let error):
                    guard let self, let exchange, self.exchange === exchange else { return }
                    self.reject(.upstreamUnreachable(upstream: origin.display, reason: Self.describe(error)))
                }
            }
    }

    /// Starts sending `leg`'s request on `upstream`.
    private func attach(_ upstream: UpstreamHandler, to leg: UpstreamLeg, reused: Bool) {
        guard let head = leg.head else { return }
        upstream.owner = self
        upstream.wasReused = reused
        upstream.watch.sawBytes = false
        leg.upstream = upstream
        exchange?.upstreamSent = .now()
        upstream.write(.head(head))
        for part in leg.pending {
            upstream.write(part)
            if case .end = part { leg.endForwarded = true }
        }
        leg.pending.removeAll()
        upstream.flush()
        if leg.endForwarded { startResponseTimer(leg) }
        if !context.channel.isWritable { upstream.pauseReads() }
        updateReading()
    }

    // MARK: Upstream → client

    func upstream(_ upstream: UpstreamHandler, received part: HTTPClientResponsePart) {
        guard let exchange, case .proxied(let leg) = exchange.kind, leg.upstream === upstream else {
            upstream.close()
            return
        }
        switch part {
        case .head(let head):
            responseHead(head, exchange: exchange, leg: leg)
        case .body(let buffer):
            guard exchange.responseStarted else { return }
            exchange.bytesOut += buffer.readableBytes
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            clientNeedsFlush = true
            if !context.channel.isWritable { upstream.pauseReads() }
        case .end(let trailers):
            responseEnd(trailers, exchange: exchange, leg: leg, upstream: upstream)
        }
    }

    private func responseHead(_ head: HTTPResponseHead, exchange: Exchange, leg: UpstreamLeg) {
        leg.sawResponse = true
        if head.status == .switchingProtocols {
            // Only a WebSocket handshake asked to switch; to anything else a 101 is a protocol violation.
            guard exchange.webSocket, exchange.requestEnded, let upstream = leg.upstream else {
                return reject(.upstreamProtocolError(upstream: leg.origin.display, reason: "unexpected 101 response"))
            }
            return switchProtocols(head, exchange: exchange, leg: leg, upstream: upstream)
        }
        if head.status.code / 100 == 1 {
            // RFC 9110 §15.2: a proxy forwards 1xx responses, except to HTTP/1.0 clients.
            if exchange.request.version.minor >= 1 {
                if head.status == .continue { exchange.sentContinue = true }
                var informational = HTTPResponseHead(version: exchange.request.version, status: head.status)
                informational.headers = HTTPHeaders()
                context.writeAndFlush(wrapOutboundOut(.head(informational)), promise: nil)
            }
            return
        }
        leg.responseDeadline = nil
        leg.upstreamKeepAlive = head.isKeepAlive
        exchange.upstreamStatus = UInt(head.status.code)
        exchange.upstreamLatency = exchange.upstreamSent.map { .now() - $0 }
        if let retry = tokenRetry(for: head, exchange: exchange, leg: leg) {
            // This answer is read and dropped; the request goes again with a new token once it has ended.
            leg.tokenRetry = retry
            return
        }
        if !exchange.requestEnded && exchange.expectsContinue && !exchange.sentContinue {
            exchange.closeAfter = true  // see `respond(_:)`: the announced body may never come
        }
        var (clientHead, framing) = Forwarding.clientResponse(
            upstream: head, request: exchange.request, route: leg.binding.route, requestID: exchange.id,
            keepAlive: exchange.keepAlive && !exchange.closeAfter && !quiescing)
        if let origin = exchange.corsOrigin { CORS.apply(origin: origin, to: &clientHead.headers) }
        if framing == .untilClose { exchange.closeAfter = true }
        exchange.responseStarted = true
        exchange.status = UInt(clientHead.status.code)
        context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
        clientNeedsFlush = true
    }

    private func responseEnd(_ trailers: HTTPHeaders?, exchange: Exchange, leg: UpstreamLeg, upstream: UpstreamHandler)
    {
        leg.upstream = nil
        upstream.owner = nil
        // Reuse the connection only if both messages on it are complete; an early answer leaves request bytes
        // unsent, so that connection is closed (data-plane pitfall 5).
        if leg.upstreamKeepAlive && leg.endForwarded {
            loop.pool.park(upstream, now: .now())
        } else {
            upstream.close()
        }
        if leg.tokenRetry != nil { return retryWithNewToken(exchange: exchange, leg: leg) }
        guard exchange.responseStarted else {
            return reject(.upstreamProtocolError(upstream: leg.origin.display, reason: "response without a head"))
        }
        writeResponseEnd(exchange, trailers: trailers)
        clientNeedsFlush = false
        if exchange.requestEnded {
            finishExchange()
        } else {
            // Answered before the upload finished: discard the rest of the body, then carry on with the connection.
            updateReading()
        }
    }

    /// Whether `head` rejects the token in a way one replay can fix (SPEC §7): `401` with `invalid_token`, or with
    /// `insufficient_claims` and a `claims` request — and only once, only for a token-bearing route, and only when
    /// the whole request body was kept (it ended within ``UpstreamLeg/replayLimit``). Anything else, including
    /// `403 insufficient_scope`, passes through untouched.
    private func tokenRetry(for head: HTTPResponseHead, exchange: Exchange, leg: UpstreamLeg) -> UpstreamLeg.TokenRetry?
    {
        guard head.status == .unauthorized, !leg.tokenRetried, exchange.requestEnded, leg.keptBody != nil,
            leg.binding.tokenKey != nil, let challenge = BearerChallenge.find(in: head.headers)
        else { return nil }
        switch challenge.error {
        case "invalid_token": return .refresh
        case "insufficient_claims": return challenge.claims.map { .claims($0) }
        default: return nil
        }
    }

    /// Sends the request again, once, with a replacement for the token the upstream rejected.
    private func retryWithNewToken(exchange: Exchange, leg: UpstreamLeg) {
        // The configuration the exchange began with, never whatever a reload has installed since (SPEC §9).
        let proxy = leg.proxy
        guard let retry = leg.tokenRetry, let scopes = leg.binding.tokenKey else {
            return reject(.upstreamProtocolError(upstream: leg.origin.display, reason: "cannot replay the request"))
        }
        leg.tokenRetry = nil
        leg.tokenRetried = true
        leg.sawResponse = false
        leg.endForwarded = false
        leg.upstreamKeepAlive = false
        leg.pending = (leg.keptBody ?? []).map { .body(.byteBuffer($0)) }
        leg.pending.append(.end(nil))
        let claims: String?
        switch retry {
        case .refresh:
            proxy.tokens.invalidate(scopes, rejected: leg.token ?? "")
            claims = nil
        case .claims(let requested):
            claims = requested
        }
        server.logger.debug(
            "upstream rejected the token; replaying once with a new one",
            metadata: ["request-id": "\(exchange.id)", "scopes": "\(scopes)"])
        fetchToken(scopes, claims: claims, proxy: proxy, exchange: exchange, leg: leg)
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

    func upstreamClosed(_ upstream: UpstreamHandler, error: (any Error)?) {
        guard let exchange, case .proxied(let leg) = exchange.kind, leg.upstream === upstream else { return }
        leg.upstream = nil
        leg.responseDeadline = nil
        if upstream.wasReused, !upstream.watch.sawBytes, leg.isReplayable(exchange.request.method) {
            // A pooled connection the upstream had already closed, before sending a single byte of an answer: the
            // request provably never reached a response (SPEC §8), so it goes again, once, on a new connection —
            // with the exchange's own configuration. Anything else (an invalid answer, half an answer, a reset
            // after the first byte) may have been acted on: never replayed.
            leg.replayed = true
            if leg.endForwarded {
                leg.endForwarded = false
                leg.pending.insert(.end(nil), at: 0)
            }
            connect(leg)
            return
        }
        if exchange.responseStarted {
            // Part of the response is already with the client; closing is the only honest signal left.
            context.close(promise: nil)
            return
        }
        if let error, !(error is IOError), !(error is ChannelError) {
            reject(.upstreamProtocolError(upstream: leg.origin.display, reason: Self.describe(error)))
        } else {
            reject(.upstreamReset(upstream: leg.origin.display))
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError: error.description
        case let error as ChannelError where error == .connectTimeout(.zero): "connect timed out"
        case let error as NIOConnectionError:
            error.connectionErrors.first.map { "\($0.error)" } ?? "connection failed"
        case let error as NIOSSLError: "TLS: \(error)"
        default: "\(error)"
        }
    }
}
