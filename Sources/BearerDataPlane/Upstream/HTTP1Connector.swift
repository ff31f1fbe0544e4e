import BearerCodec
import BearerConfiguration
import BearerHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// HTTP/1.1's ``UpstreamConnector``: a pool of idle keep-alive connections per origin (``UpstreamPool``), and new
/// connections with their pipeline — TLS when the origin is `https` (its context always with it: ``UpstreamOrigin``),
/// NIO's request encoder, the byte watch that the replay rule needs, the codec's ``ResponseDecoder`` and
/// ``UpstreamHandler``.
final class HTTP1Connector: UpstreamConnector {
    private let pool: UpstreamPool

    init(pool: UpstreamPool = UpstreamPool()) {
        self.pool = pool
    }

    func pooled(_ origin: UpstreamOrigin) -> (any UpstreamConnection)? {
        pool.take(origin)
    }

    func connect(
        _ origin: UpstreamOrigin, timeout: TimeAmount, on eventLoop: any EventLoop,
        completion: @escaping (Result<any UpstreamConnection, any Error>) -> Void
    ) {
        let pool = self.pool
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    switch origin.transport {
                    case .plain:
                        break
                    case .tls(let tls):
                        try pipeline.addHandler(
                            tls.clientHandler(for: origin.host))
                    }
                    // One handler: it frames its requests (framing set per request, data-plane pitfall 3) and
                    // decodes the answers itself, 1xx heads delivered so that `100 Continue` reaches the client
                    // (pitfall 2).
                    try pipeline.addHandler(UpstreamHandler(origin: origin))
                }
            }
            .connect(host: origin.host, port: origin.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    guard let upstream = try? channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                    else {
                        channel.close(promise: nil)
                        return completion(.failure(ChannelError.inappropriateOperationForState))
                    }
                    upstream.pool = pool
                    completion(.success(upstream))
                case .failure(let error):
                    completion(.failure(error))
                }
            }
    }

    /// Puts HTTP/1.1 on `channel`, already connected and past TLS (an `auto` origin whose server picked it in ALPN),
    /// and keeps the connection for the exchanges to `origin` that follow, as one it opened itself.
    func adopt(_ channel: any Channel, origin: UpstreamOrigin) throws -> UpstreamHandler {
        let upstream = UpstreamHandler(origin: origin)
        try channel.pipeline.syncOperations.addHandler(upstream)
        upstream.pool = pool
        return upstream
    }

    func evictIdle(now: NIODeadline) {
        pool.evictIdle(now: now)
    }

    func closeAll() {
        pool.closeAll()
    }
}
