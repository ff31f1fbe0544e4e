import BearerTelemetry
import NIOCore
import NIOHTTP2

/// A client connection that speaks HTTP/2 (RFC 9113): NIOHTTP2 frames it and decodes HPACK (SPEC §3: framing is never
/// hand-written), multiplexes its streams, and each stream is one exchange served by its own ``ProxyConnectionHandler``
/// behind an ``HTTP2StreamBridge``.
///
/// Its limits are the HTTP/1.1 side's where one exists (the header section's size, the idle time, the grace a
/// shutdown gives, the room an idle connection makes at the connection cap) and NIOHTTP2's defences against HTTP/2's
/// own attacks otherwise: rapid reset, CONTINUATION floods, control-frame floods and empty DATA frames are counted and
/// end the connection (docs/security.md).
struct HTTP2ClientConnection: Sendable {
    /// Concurrent streams a client may open on one connection (SETTINGS_MAX_CONCURRENT_STREAMS): nginx's and
    /// Envoy's default, and what keeps one connection's share of the loop bounded.
    static let maximumConcurrentStreams = 100

    let core: ProxyServerCore
    let loop: NIOLoopBound<EventLoopState>

    /// What each stream's ``ProxyConnectionHandler`` takes from its connection.
    struct Stream: Sendable {
        /// The client's IP address, read once for the connection (nil on the Unix socket).
        var clientAddress: String?
    }

    /// The connection's settings: a header section as large as an HTTP/1.1 head may be, and no server push.
    static var settings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: Acceptor.headLimits.headBytes),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
    }

    /// Puts the HTTP/2 connection's handlers after `detector`, and counts the connection until it closes.
    func configure(_ channel: any Channel, after detector: any ChannelHandler) throws {
        let management = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(
                // The idle limit is ``HTTP2IdleClose``'s, which asks this handler for its graceful close.
                maxIdleTime: nil, maxAge: nil, maxGraceTime: core.timeouts.shutdownGrace,
                keepalive: nil))
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = Self.settings
        let (core, loop) = (self.core, self.loop)
        let connectionFacts = Stream(clientAddress: channel.remoteAddress?.ipAddress)
        let idleClose = HTTP2IdleClose(metrics: core.metrics, idleLimit: core.timeouts.clientIdle)
        let streams = HTTP2IdleClose.Streams(
            handler: NIOLoopBound(idleClose, eventLoop: channel.eventLoop), next: management.http2StreamDelegate)
        let http2 = NIOHTTP2Handler(
            mode: .server, eventLoop: channel.eventLoop, connectionConfiguration: connection,
            streamConfiguration: .init(), streamDelegate: streams
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                let pipeline = stream.pipeline.syncOperations
                try pipeline.addHandler(HTTP2StreamBridge(metrics: core.metrics))
                try pipeline.addHandler(ProxyConnectionHandler(server: core, loop: loop.value, stream: connectionFacts))
            }
        }
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(http2, position: .after(detector))
        try pipeline.addHandler(idleClose, position: .after(http2))
        try pipeline.addHandler(management, position: .after(idleClose))
        try pipeline.addHandler(HTTP2ConnectionErrors(metrics: core.metrics), position: .after(management))
        let active = core.metrics.activeConnections
        active.increment()
        channel.closeFuture.whenComplete { _ in active.decrement() }
    }
}
