import NIOCore
import NIOHTTP2

/// The HTTP/2 floor: what NIOHTTP2 alone costs a proxy, measured as the HTTP/1.1 floor measures NIOHTTP1 and the
/// strict codec (docs/benchmarks.md). Clients speak HTTP/2 with prior knowledge (RFC 9113 §3.3); each stream's
/// request goes to the HTTP/1.1 upstream over a connection of the client connection's own ``H2UpstreamPool``, with
/// the route prefix stripped, `Host` and `Authorization: Bearer …` put in, and its response comes back as HEADERS and
/// DATA. Two shapes, the two a product can take:
///
/// - ``Mode/channels``: NIOHTTP2's multiplexer gives each stream a child channel with its own pipeline, and an
///   ``H2StreamHandler`` in it (the shape bearer-proxy has).
/// - ``Mode/connection``: no multiplexer; one ``H2ConnectionHandler`` reads every stream's frames on the connection's
///   own pipeline and writes its answers there (the native stream path's shape).
///
/// Only what the benchmark sends is forwarded: requests without a body, answered with a length. A request DATA frame
/// resets its stream, so that neither shape has to grant flow-control window.
enum H2Floor {
    enum Mode: String, CaseIterable, Sendable {
        case channels, connection
    }

    /// Concurrent streams a client may open (nginx's and the product's figure).
    static let settings: HTTP2Settings = [
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .enablePush, value: 0),
    ]

    static func install(on channel: any Channel, mode: Mode, configuration: ProxyConfiguration) throws {
        let pool = H2UpstreamPool(loop: channel.eventLoop, configuration: configuration)
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = settings
        let pipeline = channel.pipeline.syncOperations
        switch mode {
        case .channels:
            let bound = NIOLoopBound(pool, eventLoop: channel.eventLoop)
            let http2 = NIOHTTP2Handler(
                mode: .server, eventLoop: channel.eventLoop, connectionConfiguration: connection,
                streamConfiguration: .init()
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(H2StreamHandler(pool: bound.value))
                }
            }
            try pipeline.addHandler(http2)
        case .connection:
            try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection))
            try pipeline.addHandler(H2ConnectionHandler(pool: pool))
        }
        channel.closeFuture.assumeIsolated().whenComplete { _ in pool.closeAll() }
    }
}
