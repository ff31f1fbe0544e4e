import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// A WebSocket server on 127.0.0.1 (port chosen by the OS) built on NIOWebSocket, the upstream of the tunnel
/// tests. It echoes every data frame; answers `whoami` with whether the handshake carried a bearer token (never the
/// token); answers `ping-me` with a ping, then `pong-received` once the pong is back; and completes the close
/// handshake. A handshake to a path containing `/refuse` is answered `403` with a body, as a server that will not
/// upgrade does.
final class FakeWebSocketUpstream: TestServer {
    /// The handshakes it accepted or refused: request target and whether a bearer token came with it.
    struct Handshake: Sendable {
        let uri: String
        let bearer: Bool
    }

    let port: Int
    /// Whether it speaks TLS (the fixture certificate; trust `TLSFixtures.caFile`).
    let tls: Bool
    private let channel: any Channel
    private let recorded = Mutex<[Handshake]>([])
    private let accepted = Atomic<Int>(0)

    var handshakes: [Handshake] { recorded.withLock { $0 } }
    var acceptedConnections: Int { accepted.load(ordering: .relaxed) }
    var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }

    private init(port: Int, tls: Bool, channel: any Channel) {
        self.port = port
        self.tls = tls
        self.channel = channel
    }

    static func start(tls: Bool = false) async throws -> FakeWebSocketUpstream {
        let sslContext = tls ? try TLSFixtures.serverContext() : nil
        let box = Mutex<FakeWebSocketUpstream?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let server = box.withLock { $0 }
                    server?.accepted.add(1, ordering: .relaxed)
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 16 << 20,
                        shouldUpgrade: { channel, head in
                            let bearer = head.headers.first(name: "authorization")?.hasPrefix("Bearer ey") ?? false
                            server?.recorded.withLock { $0.append(Handshake(uri: head.uri, bearer: bearer)) }
                            return channel.eventLoop.makeSucceededFuture(head.uri.contains("/refuse") ? nil : [:])
                        },
                        upgradePipelineHandler: { channel, head in
                            let bearer = head.headers.first(name: "authorization")?.hasPrefix("Bearer ey") ?? false
                            return channel.eventLoop.makeCompletedFuture {
                                let pipeline = channel.pipeline.syncOperations
                                _ = pipeline.removeHandler(try pipeline.handler(type: RefusingHTTPHandler.self))
                                try pipeline.addHandler(WebSocketEchoHandler(bearer: bearer))
                            }
                        })
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(RefusingHTTPHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestSupportError.shutDown
        }
        let server = FakeWebSocketUpstream(port: port, tls: tls, channel: channel)
        box.withLock { $0 = server }
        return server
    }

    func shutdown() async {
        try? await channel.close()
    }

    /// Runs `body` with a WebSocket upstream, shutting it down afterwards whatever happens.
    static func with<T>(tls: Bool = false, _ body: (FakeWebSocketUpstream) async throws -> T) async throws -> T {
        try await using(try await start(tls: tls), body)
    }
}

/// What a request that was not upgraded gets: `403` with a body.
private final class RefusingHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let body = context.channel.allocator.buffer(string: "no websocket here")
        let head = HTTPResponseHead(
            version: .http1_1, status: .forbidden,
            headers: ["content-length": "\(body.readableBytes)", "content-type": "text/plain"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Echoes data frames and plays the `whoami` / `ping-me` / close parts of the script.
private final class WebSocketEchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let bearer: Bool

    init(bearer: Bool) {
        self.bearer = bearer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text where frame.fin && String(buffer: frame.unmaskedData) == "whoami":
            send(.text, bearer ? "authorized" : "anonymous", context: context)
        case .text where frame.fin && String(buffer: frame.unmaskedData) == "ping-me":
            send(.ping, "p", context: context)
        case .pong:
            send(.text, "pong-received", context: context)
        case .text, .binary, .continuation:
            let echo = WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(echo), promise: nil)
        case .connectionClose:
            let reply = WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(reply)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        default:
            break
        }
    }

    private func send(_ opcode: WebSocketOpcode, _ text: String, context: ChannelHandlerContext) {
        let frame = WebSocketFrame(fin: true, opcode: opcode, data: context.channel.allocator.buffer(string: text))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
