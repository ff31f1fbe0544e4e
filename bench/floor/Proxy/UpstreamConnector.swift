import NIOCore
import NIOPosix

/// Opens the upstream connection of one client connection, on the client's event loop.
enum UpstreamConnector {
    static func connect<Handler: ChannelHandler>(
        on loop: EventLoop, to upstream: HostPort,
        install: @escaping @Sendable (Channel) throws -> Void,
        handler: Handler.Type,
        completion: @escaping (Result<Handler, Error>) -> Void
    ) {
        ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(.maxMessagesPerRead, value: 16)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try install(channel) } }
            .connect(host: upstream.host, port: upstream.port)
            .assumeIsolated()
            .whenComplete { result in
                completion(
                    result.flatMap { channel in
                        Result { try channel.pipeline.syncOperations.handler(type: Handler.self) }
                    })
            }
    }
}
