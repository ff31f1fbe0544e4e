import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Testing

@testable import bench_floor_proxy

/// The HTTP/2 floor end to end on 127.0.0.1, in both shapes: NIOHTTP2's client on one connection, the recording
/// upstream of ``FloorProxyTests``.
@Suite("bench-floor-proxy over HTTP/2: what the upstream gets, in both shapes")
struct H2FloorTests {
    @Test(
        "concurrent GETs on one connection: each answered, prefix stripped, Host and Bearer in, the client's own out",
        arguments: H2Floor.Mode.allCases)
    func gets(mode: H2Floor.Mode) async throws {
        try await Self.withProxy(mode: mode) { client, upstreamPort, upstream in
            let answers = try await withThrowingTaskGroup(of: H2Answer.self) { group in
                for index in 0..<3 {
                    group.addTask {
                        try await client.request([
                            (":method", "GET"), (":scheme", "http"), (":authority", "proxy"),
                            (":path", "/bench/x?q=\(index)"), ("accept", "*/*"), ("authorization", "Basic eA=="),
                        ])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.status) == ["200", "200", "200"])
            #expect(answers.map(\.body) == ["ok", "ok", "ok"])
            #expect(
                Set(upstream.requests)
                    == Set(
                        (0..<3).map {
                            "GET /x?q=\($0) HTTP/1.1\r\naccept: */*\r\nHost: 127.0.0.1:\(upstreamPort)\r\n"
                                + "Authorization: Bearer \(FloorProxyTests.token)\r\n\r\n"
                        }))
        }
    }

    @Test(
        "a request with a body is refused with RST_STREAM and never reaches the upstream",
        arguments: H2Floor.Mode.allCases)
    func body(mode: H2Floor.Mode) async throws {
        try await Self.withProxy(mode: mode) { client, _, upstream in
            let answer = try await client.request(
                [(":method", "POST"), (":scheme", "http"), (":authority", "proxy"), (":path", "/bench/up")],
                body: "hello")
            #expect(answer.reset == .refusedStream)
            #expect(upstream.requests.isEmpty)
        }
    }

    static func withProxy(
        mode: H2Floor.Mode, _ body: (H2Client, Int, RecordingUpstream) async throws -> Void
    ) async throws {
        try await FloorProxyTests.withProxy(codec: .strict, http2: mode) { harness, upstreamPort, recorder in
            let client = try await H2Client.connect(group: harness.group, port: harness.proxyPort)
            do {
                try await body(client, upstreamPort, recorder)
            } catch {
                try? await client.channel.close()
                throw error
            }
            try await client.channel.close()
        }
    }
}

/// What came back on one stream.
struct H2Answer: Sendable {
    var status: String?
    var body = ""
    var reset: HTTP2ErrorCode?
}

/// NIOHTTP2's client, prior knowledge: one stream a request.
struct H2Client: Sendable {
    let channel: any Channel
    let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>

    static func connect(group: any EventLoopGroup, port: Int) async throws -> H2Client {
        try await ClientBootstrap(group: group)
            .connect(host: "127.0.0.1", port: port)
            .flatMapThrowing { channel in
                let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                    mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                ) {
                    $0.eventLoop.makeSucceededVoidFuture()
                }
                return H2Client(channel: channel, multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop))
            }.get()
    }

    func request(_ fields: [(String, String)], body: String? = nil) async throws -> H2Answer {
        let loop = channel.eventLoop
        let done = loop.makePromise(of: H2Answer.self)
        let headers = HPACKHeaders(fields)
        let multiplexer = self.multiplexer
        try await loop.submit {
            multiplexer.value.createStreamChannel(promise: nil) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(Collector(done: done))
                    let payload = HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: body == nil))
                    stream.write(payload, promise: nil)
                    if let body {
                        let data = HTTP2Frame.FramePayload.Data(
                            data: .byteBuffer(ByteBuffer(string: body)), endStream: true)
                        stream.write(HTTP2Frame.FramePayload.data(data), promise: nil)
                    }
                    stream.flush()
                }
            }
        }.get()
        return try await done.futureResult.get()
    }

    final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        private let done: EventLoopPromise<H2Answer>
        private var answer = H2Answer()

        init(done: EventLoopPromise<H2Answer>) {
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let headers):
                answer.status = answer.status ?? headers.headers.first(name: ":status")
                if headers.endStream { done.succeed(answer) }
            case .data(let data):
                if case .byteBuffer(let bytes) = data.data { answer.body += String(buffer: bytes) }
                if data.endStream { done.succeed(answer) }
            case .rstStream(let code):
                answer.reset = code
                done.succeed(answer)
            default:
                break
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(answer)
        }
    }
}
