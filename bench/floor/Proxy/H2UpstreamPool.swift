import NIOCore
import NIOHTTP2

/// One client connection's kept-alive upstream connections, on its event loop: an idle one for each request, a new
/// one when none is idle (with one stream at a time there is one; with 100 at once, up to 100).
final class H2UpstreamPool {
    private let loop: any EventLoop
    private let configuration: ProxyConfiguration
    let rewrite: RequestRewrite
    private var idle: [H2UpstreamHandler] = []
    private var all: [ObjectIdentifier: H2UpstreamHandler] = [:]
    private var closed = false

    init(loop: any EventLoop, configuration: ProxyConfiguration) {
        self.loop = loop
        self.configuration = configuration
        self.rewrite = RequestRewrite(
            stripPrefix: configuration.stripPrefix, host: configuration.upstream.authority,
            authorization: configuration.authorization)
    }

    /// Sends `head` on an idle connection or a new one; the response goes to `receiver`.
    func send(_ head: ByteBuffer, stream: HTTP2StreamID, to receiver: any H2ResponseReceiver) {
        if let upstream = idle.popLast() {
            return upstream.send(head, stream: stream, to: receiver)
        }
        UpstreamConnector.connect(
            on: loop, to: configuration.upstream,
            install: { channel in try channel.pipeline.syncOperations.addHandler(H2UpstreamHandler()) },
            handler: H2UpstreamHandler.self
        ) { [self] result in
            switch result {
            case .success(let upstream) where !closed:
                upstream.pool = self
                all[ObjectIdentifier(upstream)] = upstream
                upstream.send(head, stream: stream, to: receiver)
            case .success(let upstream):
                upstream.close()
            case .failure:
                receiver.responseFailed(stream: stream)
            }
        }
    }

    func release(_ upstream: H2UpstreamHandler) {
        if closed { upstream.close() } else { idle.append(upstream) }
    }

    func remove(_ upstream: H2UpstreamHandler) {
        all[ObjectIdentifier(upstream)] = nil
        idle.removeAll { $0 === upstream }
    }

    func closeAll() {
        closed = true
        for upstream in all.values { upstream.close() }
        idle.removeAll()
    }
}
