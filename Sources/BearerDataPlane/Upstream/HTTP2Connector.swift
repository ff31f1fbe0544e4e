import BearerCodec
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
    /// Connections with no stream for this long are closed by ``evictIdle(now:)``.
    let idleTimeout: TimeAmount

    init(idleTimeout: TimeAmount = .seconds(30)) {
        self.idleTimeout = idleTimeout
    }

    /// The connection's settings (RFC 9113 §6.5.2): no server push, and a response header section no larger than
    /// the HTTP/1.1 side lets a response head be (``ResponseDecoder/limits``), so that an upstream's HPACK cannot
    /// make the proxy hold more than that per response.
    static var settings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: ResponseDecoder.limits.headBytes),
        ]
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
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = Self.settings
        let pipeline = channel.pipeline.syncOperations
        let multiplexer = try pipeline.configureHTTP2Pipeline(
            mode: .client, connectionConfiguration: configuration, streamConfiguration: .init()
        ) { pushed in
            // Push is off (SETTINGS_ENABLE_PUSH 0): a server that opens a stream anyway gets it closed.
            pushed.close()
        }
        let connection = HTTP2UpstreamConnection(origin: origin, multiplexer: multiplexer) { [weak self] gone in
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
