import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

extension ProxyConnectionHandler: UpstreamConnectionOwner {
    // MARK: Getting a connection

    /// Sends the exchange's request on a pooled connection to its origin, or on a new one.
    func connect(_ ticket: ExchangeStateMachine.Ticket) {
        guard let exchange, let binding = exchange.binding, exchange.isPrepared else {
            // The head is rewritten before every connect (with the cached token at routing, or when the token
            // arrives): without one there is nothing to send, so the exchange fails rather than wait unbounded.
            assertionFailure("connect without a request head")
            server.metrics.stateErrors(machine: "exchange").increment()
            return run(connection.exchangeEvent { $0.connectFailed(ticket, .other) })
        }
        if let pooled = loop.connector.pooled(binding.origin) {
            arrived(pooled, ticket: ticket)
            return
        }
        // A new connection, on this connection's event loop (SPEC §3: same loop, no hops).
        // `self` captured strongly (no side table, see ``armTimer(for:)``): the connect is bounded by its timeout.
        loop.connector.connect(binding.origin, timeout: binding.connectTimeout, on: context.eventLoop) { result in
            switch result {
            case .success(let upstream):
                // One that completes after the client left is kept for the next request (data-plane pitfall 6).
                guard !self.removed else { return upstream.release(reuse: true, now: .now()) }
                self.arrived(upstream, ticket: ticket)
            case .failure(let error):
                guard !self.removed else { return }
                let failure = ConnectionFailure(error)
                self.run(self.connection.exchangeEvent { $0.connectFailed(ticket, failure) })
            }
        }
    }

    /// An upstream connection for `ticket` is ready: the machine says whether the exchange still wants it. One
    /// that completes after the client left is kept for the next request, never leaked (data-plane pitfall 6).
    private func arrived(_ upstream: any UpstreamConnection, ticket: ExchangeStateMachine.Ticket) {
        let now = self.now
        run(connection.exchangeEvent(orElse: .parkConnection) { $0.connected(ticket, now: now) }, arrived: upstream)
    }

    /// Sends the exchange's request on `upstream`, with the body parts that arrived meanwhile and its end if it came.
    package func send(on upstream: any UpstreamConnection, body: [ByteBuffer], end: Bool) {
        guard let exchange, let head = exchange.upstreamHead, upstream.lease(to: self) else {
            // Neither new nor pooled (the pool and the connect hand out no other kind), or no head (``connect(_:)``
            // checked): a bug. The connection is not shared, and the exchange fails as a lost connection would.
            assertionFailure("an upstream connection leased twice, or no request head")
            server.metrics.stateErrors(machine: "upstream_connection").increment()
            upstream.close()
            return run(connection.exchangeEvent { $0.upstreamClosed(neverProcessed: false, cause: .other) })
        }
        self.upstream = upstream
        exchange.upstreamSent = now
        upstream.send(head, body: body, end: end)
        flushUpstreamAtBatchEnd(upstream)
        if !clientWritable { upstream.pauseReads() }
        updateReading()
    }

    /// Lets go of the upstream connection: back to the pool, or closed.
    package func release(_ upstream: any UpstreamConnection, _ release: ExchangeStateMachine.Release) {
        self.upstream = nil
        upstream.release(reuse: release == .park, now: now)
    }

    /// Closes the upstream connection in use, if any (the exchange is answered without it).
    func closeUpstreamConnection() {
        upstream?.close()
        upstream = nil
    }

    // MARK: Upstream → client

    /// The parts of one read of the upstream's are one event: the time is read once for all of them.
    package func upstreamReading(_ upstream: any UpstreamConnection, _ deliver: () -> Void) {
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
            let verdict = TokenVerdict.decide(
                status: status, headers: head.headers, route: exchange.binding?.tokenRoute ?? .noToken,
                granted: exchange.tokenScopes ?? [])
            // Only an HTTP/1.0 client can need a body delimited by the close: HTTP/1.1 ones get chunks.
            let endsWithConnection =
                exchange.request.version.minor == 0
                && Forwarding.responseFraming(head, request: exchange.request) == .untilClose
            run(
                connection.responseHead(head, endsWithConnection: endsWithConnection, verdict: verdict),
                record: exchange, inUse: upstream)
        case .body(let buffer):
            run(connection.exchangeEvent { $0.responseBody(buffer) }, record: exchange, inUse: upstream)
        case .end(let trailers):
            let now = self.now
            run(
                connection.exchangeEvent { $0.responseEnd(trailers: Forwarding.clientTrailers(trailers), now: now) },
                record: exchange,
                inUse: upstream)
        }
    }

    /// Writes the upstream's response head, rewritten for the client (SPEC §8) as bytes in one pass. One whose body
    /// goes as it is (not chunked) is held back (``heldResponseHead``): a small body that follows it in the same read
    /// of the upstream's goes down the pipeline with it, as one write.
    func forwardResponseHead(_ head: UpstreamResponse, keepAlive: Bool, exchange: Exchange) {
        guard let binding = exchange.binding else { return }
        var out = responseHeads.take()
        // Room for the upstream's head and the proxy's lines, so the buffer grows at most once.
        out.clear(minimumCapacity: head.head.length + 160)
        let framing = Forwarding.writeClientHead(
            head, request: exchange.request, binding: binding,
            adding: Forwarding.ResponseAdditions(requestID: exchange.id, corsOrigin: exchange.corsOrigin),
            keepAlive: keepAlive, into: &out)
        exchange.status = UInt(head.head.status)
        if framing == .chunked {
            responseHeads.keep(out)
            write(.head(out, chunked: true), promise: nil)
        } else {
            holdResponseHead(out)
        }
        clientNeedsFlush = true
    }

    /// Sends the request again, once, with a replacement for the token the upstream rejected.
    func replay(retry: ExchangeStateMachine.TokenRetry, ticket: ExchangeStateMachine.Ticket) {
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
        }
        server.logger.debug(
            "upstream rejected the token; replaying once with a new one",
            metadata: ["request-id": "\(exchange.id)", "scopes": "\(scopes)"])
        fetchToken(ticket, claims: claims)
    }

    package func upstreamReadComplete(_ upstream: any UpstreamConnection) {
        // A response that ended in this read was flushed with its end; only a partial one needs a flush here.
        if clientNeedsFlush {
            clientNeedsFlush = false
            writeHeldResponseHead()
            flushClientAtBatchEnd()
        }
    }

    package func upstreamWritabilityChanged(_ upstream: any UpstreamConnection) {
        updateReading()
    }

    package func upstreamClosed(_ upstream: any UpstreamConnection, error: (any Error)?, neverProcessed: Bool) {
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
            case let error?: ConnectionFailure(error)
            }
        run(connection.exchangeEvent { $0.upstreamClosed(neverProcessed: neverProcessed, cause: cause) })
    }
}
