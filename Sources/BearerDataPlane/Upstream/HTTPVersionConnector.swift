import NIOCore
import NIOPosix
import NIOSSL

/// An event loop's ``UpstreamConnector``: each origin's exchanges go over the HTTP version its route chose
/// (`upstreamProtocol`, ``UpstreamOrigin/version``) — HTTP/1.1's connections and pool (``HTTP1Connector``), HTTP/2's
/// multiplexed connections (``HTTP2Connector``), or, for `auto` over TLS, whichever the server picks in ALPN.
///
/// Exchanges that find no HTTP/2 connection with room while one to their origin is being opened wait for that one
/// rather than each open their own: a burst of requests to a new origin shares one connection.
final class HTTPVersionConnector: UpstreamConnector {
    typealias Completion = (Result<any UpstreamConnection, any Error>) -> Void

    /// What a new connection turned out to speak.
    private enum Dialed {
        case http1(UpstreamHandler)
        case http2(HTTP2UpstreamConnection)
    }

    /// The server did not pick `h2` in ALPN for a route that asked for HTTP/2 only.
    struct NotHTTP2: Error, CustomStringConvertible {
        var description: String { "the upstream did not choose h2 in TLS ALPN" }
    }

    private let http1: HTTP1Connector
    private let http2: HTTP2Connector
    /// Exchanges waiting for the connection being opened to an `h2` or `auto` origin.
    private var waiting: [UpstreamOrigin: [Completion]] = [:]
    /// `auto` origins whose server picked HTTP/1.1 last: each exchange opens its own connection, as HTTP/1.1 needs.
    private var pickedHTTP1: Set<UpstreamOrigin> = []

    init(http1: HTTP1Connector = HTTP1Connector(), http2: HTTP2Connector = HTTP2Connector()) {
        self.http1 = http1
        self.http2 = http2
    }

    func pooled(_ origin: UpstreamOrigin) -> (any UpstreamConnection)? {
        switch origin.version {
        case .http1:
            return http1.pooled(origin)
        case .h2:
            return http2.pooled(origin)
        case .auto:
            if let stream = http2.pooled(origin) { return stream }
            return http1.pooled(origin)
        }
    }

    func connect(
        _ origin: UpstreamOrigin, timeout: TimeAmount, on eventLoop: any EventLoop, completion: @escaping Completion
    ) {
        if origin.version == .http1 {
            return http1.connect(origin, timeout: timeout, on: eventLoop, completion: completion)
        }
        if pickedHTTP1.contains(origin) {
            return dial(origin, timeout: timeout, on: eventLoop) { result in
                switch result {
                case .failure(let error): completion(.failure(error))
                case .success(.http1(let handler)): completion(.success(handler))
                case .success(.http2(let connection)):
                    // The server picks HTTP/2 now: the exchanges that follow share this connection.
                    self.pickedHTTP1.remove(origin)
                    guard let stream = connection.openStream() else {
                        return completion(.failure(ChannelError.ioOnClosedChannel))
                    }
                    completion(.success(stream))
                }
            }
        }
        if waiting[origin] != nil { return waiting[origin]!.append(completion) }
        waiting[origin] = [completion]
        dial(origin, timeout: timeout, on: eventLoop) { result in
            let waiters = self.waiting.removeValue(forKey: origin) ?? []
            switch result {
            case .failure(let error):
                for waiter in waiters { waiter(.failure(error)) }
            case .success(.http1(let handler)):
                self.pickedHTTP1.insert(origin)
                // One HTTP/1.1 connection serves one exchange; the others open their own.
                guard let first = waiters.first else { return handler.release(reuse: true, now: .now()) }
                first(.success(handler))
                for waiter in waiters.dropFirst() {
                    self.connect(origin, timeout: timeout, on: eventLoop, completion: waiter)
                }
            case .success(.http2(let connection)):
                self.pickedHTTP1.remove(origin)
                for waiter in waiters {
                    if let stream = connection.openStream() {
                        waiter(.success(stream))
                    } else {
                        // Beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS, or it went away at once.
                        self.connect(origin, timeout: timeout, on: eventLoop, completion: waiter)
                    }
                }
            }
        }
    }

    /// Opens a connection to `origin`, an `h2` or `auto` one: HTTP/2 with prior knowledge in the clear (RFC 9113
    /// §3.3), else TLS whose ALPN (RFC 7301) decides.
    private func dial(
        _ origin: UpstreamOrigin, timeout: TimeAmount, on eventLoop: any EventLoop,
        completion: @escaping (Result<Dialed, any Error>) -> Void
    ) {
        let negotiated = eventLoop.makePromise(of: String?.self)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard case .tls(let tls) = origin.transport else { return }
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(
                        tls.clientHandler(for: origin.host))
                    try pipeline.addHandler(UpstreamProtocolNegotiation(negotiated: negotiated))
                }
            }
            .connect(host: origin.host, port: origin.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .failure(let error):
                    negotiated.fail(error)
                    completion(.failure(error))
                case .success(let channel):
                    guard case .tls = origin.transport else {
                        negotiated.succeed(nil)
                        return completion(self.adopt(channel, origin: origin, speaking: UpstreamALPN.h2))
                    }
                    negotiated.futureResult.assumeIsolated().whenComplete { negotiation in
                        switch negotiation {
                        case .failure(let error):
                            channel.close(promise: nil)
                            completion(.failure(error))
                        case .success(let chosen):
                            completion(self.adopt(channel, origin: origin, speaking: chosen))
                        }
                    }
                }
            }
    }

    /// Puts the pipeline of the protocol `chosen` on `channel` (nil: the server picked none, which is HTTP/1.1).
    private func adopt(_ channel: any Channel, origin: UpstreamOrigin, speaking chosen: String?) -> Result<
        Dialed, any Error
    > {
        do {
            if chosen == UpstreamALPN.h2 { return .success(.http2(try http2.adopt(channel, origin: origin))) }
            // RFC 9113 §3.2: a route that asked for HTTP/2 only does not fall back to HTTP/1.1.
            guard origin.version == .auto else { throw NotHTTP2() }
            return .success(.http1(try http1.adopt(channel, origin: origin)))
        } catch {
            channel.close(promise: nil)
            return .failure(error)
        }
    }

    func evictIdle(now: NIODeadline) {
        http1.evictIdle(now: now)
        http2.evictIdle(now: now)
    }

    func closeAll() {
        http1.closeAll()
        http2.closeAll()
    }
}
