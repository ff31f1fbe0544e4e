import NIOCore
import NIOHTTP1
import NIOPosix

/// The listening half every fake server shares (`FakeUpstream`, `FakeIdentityProvider`, `FakeFirebase`): a socket
/// on 127.0.0.1 (or another loopback address) with a port the OS chooses, each accepted connection registered with the fake's state so that
/// shutdown can close the ones still open (hanging or held ones included).
struct FakeHTTPServer: Sendable {
    /// The port it listens on (127.0.0.1).
    let port: Int
    private let channel: any Channel

    /// Starts listening (on `port`, 0: one the OS chooses). For every accepted connection `opened` returns its id — nil while the fake is shutting
    /// down, and the connection is closed — `closed` hears when it closes, and `configure` builds its pipeline.
    static func start(
        host: String = "127.0.0.1", port: Int = 0,
        opened: @escaping @Sendable (any Channel) -> Int?,
        closed: @escaping @Sendable (Int) -> Void,
        configure: @escaping @Sendable (any Channel, Int) throws -> Void
    ) async throws -> FakeHTTPServer {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Room for the 1,000-connection bursts some tests make (a dropped SYN is retried a second later).
            .serverChannelOption(.backlog, value: 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let id = opened(channel) else {
                        channel.close(promise: nil)  // accepted while shutting down
                        return
                    }
                    channel.closeFuture.whenComplete { _ in closed(id) }
                    try configure(channel, id)
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestSupportError.shutDown
        }
        return FakeHTTPServer(port: port, channel: channel)
    }

    /// Stops listening, then closes `connections` (what the fake's state handed over when it shut down).
    func shutdown(closing connections: [any Channel]) async {
        try? await self.channel.close()
        for connection in connections {
            try? await connection.close()
            try? await connection.closeFuture.get()
        }
    }
}

/// A complete response a fake writes: status, headers without framing, body.
protocol FakeHTTPResponse {
    var status: Int { get }
    var headers: [(String, String)] { get }
    var body: [UInt8] { get }
}

extension ChannelHandlerContext {
    /// Writes `response` with its `content-length`; without keep-alive, says `connection: close` and closes once
    /// it is written.
    func writeFakeResponse(_ response: some FakeHTTPResponse, keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "content-length", value: "\(response.body.count)")
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        self.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        if !response.body.isEmpty {
            let buffer = self.channel.allocator.buffer(bytes: response.body)
            self.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = self.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in self.close(promise: nil) }
        }
    }
}

/// One request as a fake's handler collected it, with the views its endpoints need.
struct FakeHTTPRequest: Sendable {
    var method: HTTPMethod
    var uri: String
    var headers: HTTPHeaders
    var body: [UInt8]

    /// The path without the query.
    var path: String {
        String(self.uri.prefix { $0 != "?" })
    }

    /// The query's parameters, decoded (the last value of a repeated name).
    var query: [String: String] {
        guard let mark = self.uri.firstIndex(of: "?") else { return [:] }
        return Self.lastValues(FakeIdentityForm.decode(String(self.uri[self.uri.index(after: mark)...])))
    }

    /// The form body's parameters, decoded (the last value of a repeated name).
    var form: [String: String] {
        Self.lastValues(FakeIdentityForm.decode(self.body))
    }

    private static func lastValues(_ pairs: [(name: String, value: String)]) -> [String: String] {
        Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}
