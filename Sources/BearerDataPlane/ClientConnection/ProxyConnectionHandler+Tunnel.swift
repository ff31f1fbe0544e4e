import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// A WebSocket handshake that the upstream accepted becomes a byte tunnel (SPEC §8): the `101` goes to the client,
/// then both pipelines drop their HTTP handlers for the two ends of a ``Tunnel``.
extension ProxyConnectionHandler {
    /// The upstream answered `101 Switching Protocols` to the exchange's WebSocket handshake.
    func switchProtocols(
        _ head: UpstreamResponse, exchange: Exchange, binding: RouteBinding, upstream: UpstreamHandler
    ) {
        exchange.status = 101
        let answer = WebSocketUpgrade.switchingProtocols(upstream: head.headers, requestID: exchange.id)
        write(.head(ResponseHeadBytes.bytes(answer), chunked: false), promise: nil)
        write(.end(trailers: nil), promise: nil, flush: true)
        // NIO's decoder is still delivering the 101 on the upstream side; its pipeline changes once that is done.
        context.eventLoop.assumeIsolated().execute { [self] in
            becomeTunnel(exchange, binding: binding, upstream: upstream)
        }
    }

    private func becomeTunnel(_ exchange: Exchange, binding: RouteBinding, upstream: UpstreamHandler) {
        // The client may have left since the 101 was written: its handler is gone from the pipeline.
        guard !removed else { return upstream.close() }
        guard self.exchange === exchange, context.channel.isActive, let upstreamChannel = upstream.channel,
            upstreamChannel.isActive
        else {
            upstream.close()
            closeClient()
            return
        }
        let clientChannel = context.channel
        let (clientEnd, upstreamEnd) = Tunnel.join(
            idleLimit: binding.tunnelIdleTimeout ?? server.timeouts.clientIdle, loop: context.eventLoop
        ) { [self] tunnel in
            exchange.bytesIn += tunnel.bytesFromClient
            exchange.bytesOut += tunnel.bytesFromUpstream
            let illegal = tunnel.machine.illegalEvents
            if illegal > 0 { server.metrics.stateErrors(machine: "tunnel").increment(by: Int64(illegal)) }
            record(exchange, status: 101)
            server.metrics.activeConnections.decrement()
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
            // next bytes from its side on two connections in three (#24, the real clients' corpus;
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
