import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A real HTTP/2 server (NIOHTTP2) on 127.0.0.1 (port chosen by the OS) that plays an upstream API: in the clear with
/// prior knowledge, or over TLS with the fixture certificate and ALPN offering `h2` only. Each request — its header
/// section and whole body — goes to the test's closure on the stream's loop, which says what to answer. It counts the
/// connections it accepted and records every request, so tests can assert on both.
final class FakeHTTP2Upstream: Sendable {
    /// A request as it arrived.
    struct Request: Sendable {
        var headers: HPACKHeaders
        var bodyLength: Int
        /// Lower-case hex SHA-256 of the body bytes received.
        var bodySHA256: String
        var connection: Int
        func header(_ name: String) -> String? { headers.first(name: name) }
        var path: String { header(":path") ?? "" }
    }

    /// What to do with a request.
    enum Answer: Sendable {
        /// A response: its status, fields, body and, when given, a trailing header section.
        case respond(
            status: Int, fields: [(String, String)] = [], body: ByteBuffer = ByteBuffer(),
            trailers: [(String, String)]? = nil)
        /// RST_STREAM with this error code, no response.
        case reset(HTTP2ErrorCode)
        /// The response, then GOAWAY naming this stream as the last one the server processes (RFC 9113 §6.8).
        case respondThenGoAway(status: Int)
        /// Nothing: the stream stays open, unanswered, until the client resets it (``resets``).
        case silent
        /// A response head and the start of its body, then RST_STREAM with this error code.
        case respondThenReset(status: Int, fields: [(String, String)], body: ByteBuffer, HTTP2ErrorCode)
    }

    /// A stream the client reset (RST_STREAM) before its answer ended.
    struct Reset: Sendable, Equatable {
        var path: String
        var code: HTTP2ErrorCode
    }

    let tls: Bool
    private let channel: any Channel
    private let accepted = Atomic<Int>(0)
    private let recorded = Mutex<[Request]>([])
    private let written = Mutex<[String]>([])
    private let bodyBytes = Atomic<Int>(0)
    /// The streams the client reset, in order; tests wait on it.
    let resets = WatchedState<[Reset]>([], timerLoop: MultiThreadedEventLoopGroup.singleton.next()) {
        "\($0.count) streams reset"
    }

    var port: Int { channel.localAddress?.port ?? 0 }
    var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    /// Connections accepted so far.
    var connections: Int { accepted.load(ordering: .relaxed) }
    var requests: [Request] { recorded.withLock { $0 } }
    /// Response body bytes written to the socket so far, over every stream (flow control let them go).
    var bodyBytesWritten: Int { bodyBytes.load(ordering: .relaxed) }
    /// The paths whose whole response the server has written to its socket (flow control let every byte go).
    var answered: [String] { written.withLock { $0 } }

    private init(tls: Bool, channel: any Channel) {
        self.tls = tls
        self.channel = channel
    }

    static func start(
        tls: Bool = false, answer: @escaping @Sendable (Request) -> Answer
    ) async throws -> FakeHTTP2Upstream {
        var sslContext: NIOSSLContext?
        if tls {
            let chain = try NIOSSLCertificate.fromPEMFile(TLSFixtures.serverCertificateFile).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(file: TLSFixtures.serverKeyFile, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(key))
            configuration.applicationProtocols = ["h2"]
            sslContext = try NIOSSLContext(configuration: configuration)
        }
        let box = Box()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [sslContext] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let upstream = box.upstream else { throw ChannelError.ioOnClosedChannel }
                    let connection = upstream.accepted.add(1, ordering: .relaxed).newValue
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext { try pipeline.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(
                                StreamHandler(upstream: upstream, connection: connection, answer: answer))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let upstream = FakeHTTP2Upstream(tls: tls, channel: channel)
        box.upstream = upstream
        return upstream
    }

    func shutdown() async throws {
        try await channel.close()
    }

    fileprivate func record(_ request: Request) {
        recorded.withLock { $0.append(request) }
    }

    fileprivate func wrote(_ path: String) {
        written.withLock { $0.append(path) }
    }

    /// The upstream, set once it exists (before any connection can be accepted).
    private final class Box: Sendable {
        private let value = Mutex<FakeHTTP2Upstream?>(nil)
        var upstream: FakeHTTP2Upstream? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    /// One stream: gathers the request, then plays the answer.
    private final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        let upstream: FakeHTTP2Upstream
        let connection: Int
        let answer: @Sendable (Request) -> Answer
        var headers: HPACKHeaders?
        var body = BodyDigest(prefixCap: 0)

        init(upstream: FakeHTTP2Upstream, connection: Int, answer: @escaping @Sendable (Request) -> Answer) {
            self.upstream = upstream
            self.connection = connection
            self.answer = answer
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let ended: Bool
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                if headers == nil { headers = frame.headers }
                ended = frame.endStream
            case .data(let frame):
                if case .byteBuffer(let buffer) = frame.data { body.add(buffer) }
                ended = frame.endStream
            case .rstStream(let code):
                let path = headers?.first(name: ":path") ?? ""
                upstream.resets.mutate { $0.append(Reset(path: path, code: code)) }
                return
            default:
                ended = false
            }
            guard ended, let headers else { return }
            let request = Request(
                headers: headers, bodyLength: body.length, bodySHA256: body.sha256, connection: connection)
            upstream.record(request)
            play(answer(request), context: context)
        }

        private func play(_ answer: Answer, context: ChannelHandlerContext) {
            switch answer {
            case .respond(let status, let fields, let body, let trailers):
                let path = headers?.first(name: ":path") ?? ""
                let upstream = self.upstream
                // Its last frame's write completes once NIOHTTP2's flow control has let every byte go.
                respond(status: status, fields: fields, body: body, trailers: trailers, context: context)
                    .whenSuccess { upstream.wrote(path) }

            case .reset(let code):
                context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
            case .silent:
                break
            case .respondThenReset(let status, let fields, let body, let code):
                var head = HPACKHeaders([(":status", String(status))])
                for (name, value) in fields { head.add(name: name, value: value) }
                context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
                context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
            case .respondThenGoAway(let status):
                _ = respond(status: status, fields: [], body: ByteBuffer(), trailers: nil, context: context)
                let id =
                    (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
                context.channel.parent?.writeAndFlush(
                    HTTP2Frame(
                        streamID: .rootStream,
                        payload: .goAway(lastStreamID: id, errorCode: .noError, opaqueData: nil)),
                    promise: nil)
            }
        }

        private func respond(
            status: Int, fields: [(String, String)], body: ByteBuffer, trailers: [(String, String)]?,
            context: ChannelHandlerContext
        ) -> EventLoopFuture<Void> {
            var head = HPACKHeaders([(":status", String(status))])
            for (name, value) in fields { head.add(name: name, value: value) }
            let headOnly = body.readableBytes == 0 && trailers == nil
            var last = context.write(wrapOutboundOut(.headers(.init(headers: head, endStream: headOnly))))
            // In frames of 256 KiB, each counted once written, so a test can watch the body go out.
            var rest = body
            while rest.readableBytes > 0, let part = rest.readSlice(length: min(rest.readableBytes, 256 * 1024)) {
                let upstream = self.upstream
                let size = part.readableBytes
                last = context.write(
                    wrapOutboundOut(
                        .data(.init(data: .byteBuffer(part), endStream: rest.readableBytes == 0 && trailers == nil))))
                last.whenSuccess { upstream.bodyBytes.add(size, ordering: .relaxed) }
            }
            if let trailers {
                last = context.write(
                    wrapOutboundOut(.headers(.init(headers: HPACKHeaders(trailers), endStream: true))))
            }
            context.flush()
            return last
        }
    }
}
