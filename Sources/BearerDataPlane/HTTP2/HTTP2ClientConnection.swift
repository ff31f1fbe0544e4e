import BearerTelemetry
import NIOCore
import NIOHTTP2

/// A client connection that speaks HTTP/2 (RFC 9113): NIOHTTP2 frames it and decodes HPACK (SPEC §3: framing is never
/// hand-written), and each stream is one exchange served by its own ``ProxyConnectionHandler`` through an
/// ``HTTP2ClientStream`` of the connection's ``HTTP2StreamTable``.
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
        let idleClose = HTTP2IdleClose(metrics: core.metrics, idleLimit: core.timeouts.clientIdle)
        // No multiplexer: the streams are the table's, on this pipeline.
        let http2 = NIOHTTP2Handler(mode: .server, connectionConfiguration: connection)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(http2, position: .after(detector))
        try pipeline.addHandler(idleClose, position: .after(http2))
        try pipeline.addHandler(management, position: .after(idleClose))
        let errors = HTTP2ConnectionErrors(metrics: core.metrics)
        try pipeline.addHandler(errors, position: .after(management))
        try pipeline.addHandler(HTTP2StreamTable(core: core, loop: loop.value), position: .after(errors))
        let active = core.metrics.activeConnections
        active.increment()
        channel.closeFuture.whenComplete { _ in active.decrement() }
    }
}
