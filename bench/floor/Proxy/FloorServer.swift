import NIOCore
import NIOPosix

/// The listening socket of bench-floor-proxy: each accepted connection gets the client side of `codec`.
enum FloorServer {
    static func bind(
        codec: BenchFloorProxy.Codec, http2: H2Floor.Mode? = nil, host: String, port: Int,
        configuration: ProxyConfiguration,
        group: EventLoopGroup
    ) -> EventLoopFuture<Channel> {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let http2 {
                        return try H2Floor.install(on: channel, mode: http2, configuration: configuration)
                    }
                    switch codec {
                    case .nio: try CodecClientHandler.install(on: channel, configuration: configuration)
                    case .strict: try StrictClientHandler.install(on: channel, configuration: configuration)
                    }
                }
            }
            .bind(host: host, port: port)
    }
}
