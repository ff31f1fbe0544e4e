import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix

/// One HTTP/2 response as ``HTTP2TestClient`` saw it.
struct HTTP2TestResponse: Sendable {
    /// The final response's `:status`; nil when the stream was reset before one came.
    var status: Int?
    /// The 1xx responses' statuses, in order.
    var informational: [Int] = []
    var headers = HPACKHeaders()
    var body = ByteBuffer()
    var trailers: HPACKHeaders?
    /// The error code of the RST_STREAM that ended the stream, if one did.
    var reset: HTTP2ErrorCode?
    /// The final response's HEADERS frame ended the stream (no DATA followed).
    var endedWithHead = false
    /// DATA frames received.
    var dataFrames = 0

    func header(_ name: String) -> String? { headers.first(name: name) }
    var bodyText: String { String(buffer: body) }
}

/// An HTTP/2 client with prior knowledge (RFC 9113 §3.3) on NIOHTTP2, for tests on real sockets: each request is a
/// stream of its own, and many may run at once on the one connection.
struct HTTP2TestClient: Sendable {
    typealias Stream = NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>

    let channel: any Channel
    let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Stream>

    /// Connects to 127.0.0.1:`port`. `validates`: false lets the client send what NIOHTTP2 would refuse to send.
    static func connect(port: Int, validates: Bool = true) async throws -> HTTP2TestClient {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    var configuration = NIOHTTP2Handler.Configuration()
                    if !validates { configuration.connection.headerBlockValidation = .disabled }
                    let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                        mode: .client, configuration: configuration
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture { try Stream(wrappingChannelSynchronously: stream) }
                    }
                    return HTTP2TestClient(channel: channel, multiplexer: multiplexer)
                }
            }
    }

    /// A request's header section: the pseudo-headers, then `fields`.
    static func request(
        _ method: String = "GET", _ path: String, authority: String = "127.0.0.1", fields: [(String, String)] = []
    ) -> HPACKHeaders {
        var headers = HPACKHeaders([(":method", method), (":scheme", "http"), (":path", path)])
        headers.add(name: ":authority", value: authority)
        for (name, value) in fields { headers.add(name: name, value: value) }
        return headers
    }

    /// Sends `headers`, then `body` as DATA frames and `trailers`, on a new stream, and reads its response.
    func send(_ headers: HPACKHeaders, body: [ByteBuffer] = [], trailers: HPACKHeaders? = nil) async throws
        -> HTTP2TestResponse
    {
        let stream = try await multiplexer.openStream { channel in
            channel.eventLoop.makeCompletedFuture { try Stream(wrappingChannelSynchronously: channel) }
        }
        return try await stream.executeThenClose { inbound, outbound in
            try await outbound.write(.headers(.init(headers: headers, endStream: body.isEmpty && trailers == nil)))
            for (index, part) in body.enumerated() {
                let last = index == body.count - 1 && trailers == nil
                try await outbound.write(.data(.init(data: .byteBuffer(part), endStream: last)))
            }
            if let trailers { try await outbound.write(.headers(.init(headers: trailers, endStream: true))) }
            var response = HTTP2TestResponse()
            do {
                for try await frame in inbound {
                    switch frame {
                    case .headers(let frame):
                        if let status = frame.headers.first(name: ":status").flatMap({ Int($0) }) {
                            if status < 200 {
                                response.informational.append(status)
                            } else {
                                response.status = status
                                response.headers = frame.headers
                                response.endedWithHead = frame.endStream
                            }
                        } else {
                            response.trailers = frame.headers
                        }
                        if frame.endStream { return response }
                    case .data(let frame):
                        response.dataFrames += 1
                        if case .byteBuffer(var bytes) = frame.data { response.body.writeBuffer(&bytes) }
                        if frame.endStream { return response }
                    case .rstStream(let code):
                        response.reset = code
                        return response
                    default:
                        break
                    }
                }
            } catch let closed as NIOHTTP2Errors.StreamClosed {
                response.reset = closed.errorCode
            }
            return response
        }
    }

    func close() async {
        try? await channel.close()
    }

    /// Runs `body` on a new connection to `port`, and closes the connection however `body` ends.
    static func with<T>(port: Int, _ body: (HTTP2TestClient) async throws -> T) async throws -> T {
        let client = try await connect(port: port)
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }
}
