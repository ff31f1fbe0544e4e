import BearerCodec
import BearerTelemetry
import NIOCore
import NIOHTTP2

/// HTTP/2's half of an event loop's upstream connections: the connections it keeps per origin, each multiplexing the
/// exchanges that go there (``HTTP2UpstreamConnection``), and the pipeline of a new one. Exchanges take a stream of
/// a connection with room; when every connection to the origin is at the upstream's SETTINGS_MAX_CONCURRENT_STREAMS,
/// the next exchange opens another connection rather than wait (``HTTPVersionConnector``), so no exchange waits
/// behind another's slow response.
final class HTTP2Connector {
    /// The connections to each origin that take new streams, oldest first.
    private var connections: [UpstreamOrigin: [HTTP2UpstreamConnection]] = [:]
    /// Connections with no stream for this long are closed with GOAWAY (``HTTP2UpstreamConnection``): the HTTP/1.1
    /// pool's idle limit (``ProxyTimeouts/upstreamIdle``, 30 s), below common servers' own idle closes (nginx 75 s),
    /// so that the proxy, not the upstream, ends an idle connection and no exchange races the upstream's close.
    let idleTimeout: TimeAmount
    /// Where each connection's end is counted (`bearer_proxy_upstream_http2_connections_ended_total`).
    private let metrics: ProxyMetrics?

    init(idleTimeout: TimeAmount = .seconds(30), metrics: ProxyMetrics? = nil) {
        self.idleTimeout = idleTimeout
        self.metrics = metrics
    }

    /// How long a connection may have no stream before it is probed with PING (RFC 9113 §6.7): a third of the idle
    /// limit (10 s by default), so that an upstream gone silent — a crashed host, a NAT or load balancer that dropped
    /// the flow — is found before an exchange is put on it, at two or three PINGs in an idle connection's life:
    /// far below any server's PING flood limit.
    var pingInterval: TimeAmount { .nanoseconds(idleTimeout.nanoseconds / 3) }

    /// How long a PING may go without its ACK before the connection is taken for dead and closed: half the PING
    /// interval (5 s by default), many round trips even to a distant upstream.
    var pingTimeout: TimeAmount { .nanoseconds(idleTimeout.nanoseconds / 6) }

    /// The largest frame payload the proxy takes (SETTINGS_MAX_FRAME_SIZE, RFC 9113 §4.2, §6.5.2): the protocol's
    /// initial value, said explicitly so that an upstream's frame over it is a FRAME_SIZE_ERROR of the connection.
    static let maximumFrameSize = 1 << 14

    /// The flow-control window the proxy opens for each stream and for the connection (RFC 9113 §6.9.2): the
    /// protocol's initial value, so that a stream holds at most this much of a response its client has not read.
    static let windowSize = 65_535

    /// The connection's settings (RFC 9113 §6.5.2): no server push, a response header section no larger than the
    /// HTTP/1.1 side lets a response head be (``ResponseDecoder/limits``), so that an upstream's HPACK cannot make the
    /// proxy hold more than that per response (RFC 9113 §10.5.1), and the frame size and stream window above.
    static var settings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: ResponseDecoder.limits.headBytes),
            HTTP2Setting(parameter: .maxFrameSize, value: maximumFrameSize),
            HTTP2Setting(parameter: .initialWindowSize, value: windowSize),
        ]
    }

    /// Frames a hostile upstream could send without end to make the proxy work or hold memory (RFC 9113 §10.5): each
    /// kind is counted, and past its limit the connection ends with GOAWAY — ENHANCE_YOUR_CALM for the floods,
    /// PROTOCOL_ERROR, COMPRESSION_ERROR or FLOW_CONTROL_ERROR for what breaks the protocol — and every exchange on
    /// it gets a `502`. The values are NIOHTTP2's, the client side's too (docs/security.md), set here so that they
    /// are the proxy's decision and written down.
    static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = settings
        // RFC 9113 §6.10: a header section is one HEADERS frame and its CONTINUATIONs; more than 5 in a row is a
        // CONTINUATION flood (CVE-2024-27316 and kin), never buffered further.
        configuration.maximumSequentialContinuationFrames = 5
        // RFC 9113 §10.5: DATA frames that carry nothing and do not end the stream cost work and move no byte.
        configuration.maximumSequentialEmptyDataFrames = 1
        // RFC 9113 §6.5.3, §6.7: each SETTINGS and PING is owed an ACK; an upstream that sends them and reads nothing
        // makes the proxy queue answers, at most this many.
        configuration.maximumBufferedControlFrames = 10_000
        // RFC 9113 §10.5: SETTINGS, PING and PRIORITY floods.
        configuration.controlFrameRateLimit.maximumCount = 200
        configuration.controlFrameRateLimit.windowLength = .seconds(30)
        // Stream errors the upstream causes (malformed frames on a stream) before the connection is given up.
        configuration.maximumConnectionGlitches = 200
        configuration.targetWindowSize = windowSize
        return configuration
    }

    /// RST_STREAM frames an upstream may send on one connection in a second (``streamConfiguration``).
    static let maximumResetsPerSecond = 2_000

    /// The streams' configuration: the window above, and how many RST_STREAM frames the upstream may send. On this
    /// side a reset costs the proxy nothing it did not spend already: the upstream can only reset a stream the proxy
    /// opened for a client's request, and servers reset streams as a matter of course — nginx ends with RST_STREAM
    /// NO_ERROR every stream it answered before the request's end, gRPC servers every call they finish first
    /// (RFC 9113 §8.1). What is left to bound is a flood of resets for streams already closed, frames that cost only
    /// their reading: past 2,000 in a second (the rate one connection's streams rarely reach; 16 KiB of timestamps
    /// held), the connection ends with ENHANCE_YOUR_CALM (RFC 9113 §10.5). NIOHTTP2's own default, 200 in 30 s, is a
    /// server's defence against rapid reset (CVE-2023-44487), and cut nginx off after 200 answers.
    static var streamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = windowSize
        configuration.streamResetFrameRateLimit.maximumCount = maximumResetsPerSecond
        configuration.streamResetFrameRateLimit.windowLength = .seconds(1)
        configuration.streamErrorRateLimit.maximumCount = 200
        configuration.streamErrorRateLimit.windowLength = .seconds(30)
        return configuration
    }

    /// Puts NIOHTTP2's handler, the ``HTTP2UpstreamFrameFilter`` and NIOHTTP2's stream multiplexer on `channel`, and
    /// returns the multiplexer that opens the exchanges' streams. The multiplexer is a handler of its own, not the one
    /// inside NIOHTTP2's handler, so that the filter can stand between them.
    static func configure(_ channel: any Channel) throws -> HTTP2StreamMultiplexer {
        let http2 = NIOHTTP2Handler(
            mode: .client, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration)
        let multiplexer = HTTP2StreamMultiplexer(
            mode: .client, channel: channel, targetWindowSize: streamConfiguration.targetWindowSize,
            outboundBufferSizeHighWatermark: streamConfiguration.outboundBufferSizeHighWatermark,
            outboundBufferSizeLowWatermark: streamConfiguration.outboundBufferSizeLowWatermark
        ) { pushed in
            // Push is off (SETTINGS_ENABLE_PUSH 0): a server that opens a stream anyway gets it closed.
            pushed.close()
        }
        try channel.pipeline.syncOperations.addHandlers([http2, HTTP2UpstreamFrameFilter(), multiplexer])
        return multiplexer
    }

    /// A stream for one exchange on a connection to `origin` with room, if there is one — at once.
    func pooled(_ origin: UpstreamOrigin) -> HTTP2UpstreamStream? {
        guard let list = connections[origin] else { return nil }
        for connection in list {
            if let stream = connection.openStream() { return stream }
        }
        return nil
    }

    /// Puts HTTP/2 on `channel` — connected, and past TLS when `origin` has it — and keeps the connection for the
    /// exchanges to `origin` that follow.
    func adopt(_ channel: any Channel, origin: UpstreamOrigin) throws -> HTTP2UpstreamConnection {
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try Self.configure(channel)
        let connection = HTTP2UpstreamConnection(
            origin: origin, multiplexer: multiplexer,
            idle: .init(limit: idleTimeout, pingInterval: pingInterval, pingTimeout: pingTimeout), metrics: metrics
        ) { [weak self] gone in
            self?.forget(gone)
        }
        try pipeline.addHandler(connection)
        connections[origin, default: []].append(connection)
        return connection
    }

    /// Forgets `connection`: it takes no new streams (GOAWAY, an error, the close).
    private func forget(_ connection: HTTP2UpstreamConnection) {
        guard var list = connections[connection.origin] else { return }
        list.removeAll { $0 === connection }
        connections[connection.origin] = list.isEmpty ? nil : list
    }

    /// Closes the connections that have had no stream for ``idleTimeout``.
    func evictIdle(now: NIODeadline) {
        // From a copy: closing one forgets it meanwhile.
        for connection in connections.values.flatMap({ $0 }) {
            _ = connection.closeIfIdle(now: now, limit: idleTimeout)
        }
    }

    /// Closes every connection (shutdown).
    func closeAll() {
        let all = connections.values.flatMap { $0 }
        connections = [:]
        for connection in all { connection.close() }
    }
}
