import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One keep-alive HTTP/1.1 client connection (NIO `ClientBootstrap`, NIO's request encoder and response decoder)
/// for sending several requests in turn on the same socket — e.g. to check that the proxy keeps the client
/// connection alive, or that it reuses its upstream connection.
///
/// Requests on one connection run one at a time (a second `send` while one is in flight fails with
/// `TestSupportError.connectionBusy`). What is sent is exactly what the test asks for, plus:
/// - `Host: 127.0.0.1:PORT` first, unless the headers have a `Host` (use `TestClient.raw` to send none);
/// - a framing header for `.bytes`/`.stream` bodies unless the headers already have `content-length` or
///   `transfer-encoding` (NIO's automatic framing is off: a bodiless POST goes out without either).
/// With `Expect: 100-continue` (and a body) the head is sent alone and the body only after a `100 Continue`; a
/// final answer instead means the body is never sent and the connection is closed after that response.
/// If the server answers before the upload has finished, the upload goes on (the server may be discarding it to
/// keep the connection) unless the answer says `connection: close`. Each exchange fails with
/// `TestSupportError.timedOut` after `timeout` without any byte read or written.
final class TestConnection: Sendable {
    /// The underlying channel (closed by `close()`).
    let channel: any Channel
    /// The server port this connection talks to (0 over a Unix-domain socket).
    let port: Int
    /// The `Host` sent when the request names none: `127.0.0.1:PORT`, or `localhost` through a socket file (as
    /// `curl --unix-socket` sends it).
    private let defaultHost: String
    private let handler: NIOLoopBound<TestClientHandler>

    private init(channel: any Channel, port: Int, defaultHost: String, handler: NIOLoopBound<TestClientHandler>) {
        self.channel = channel
        self.port = port
        self.defaultHost = defaultHost
        self.handler = handler
    }

    /// Connects to the Unix-domain socket at `path`.
    static func open(unixSocket path: String, timeout: Duration = TestClient.defaultTimeout) async throws
        -> TestConnection
    {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try Self.addHTTPHandlers(to: channel.pipeline.syncOperations) }
            }
            .connect(unixDomainSocketPath: path).get()
        return try await TestConnection(channel: channel, port: 0, defaultHost: "localhost")
    }

    private convenience init(channel: any Channel, port: Int, defaultHost: String) async throws {
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(
                try channel.pipeline.syncOperations.handler(type: TestClientHandler.self), eventLoop: channel.eventLoop)
        }.get()
        self.init(channel: channel, port: port, defaultHost: defaultHost, handler: handler)
    }

    /// Connects to 127.0.0.1:`port`. With `tls`, trusts only the fixture CA (`TLSFixtures.clientContext()`) and
    /// verifies `serverHostname` (nil: the certificate must name the IP address 127.0.0.1).
    static func open(
        port: Int, tls: Bool = false, serverHostname: String? = nil, timeout: Duration = TestClient.defaultTimeout
    ) async throws -> TestConnection {
        let sslContext = tls ? try TLSFixtures.clientContext() : nil
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(
                            NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    }
                    try Self.addHTTPHandlers(to: pipeline)
                }
            }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        return try await TestConnection(channel: channel, port: port, defaultHost: "127.0.0.1:\(port)")
    }

    /// Takes over `descriptor`, a TCP socket already connected to 127.0.0.1:`port` — one made with system calls
    /// for what NIO cannot do, such as a socket given to another user before it connected.
    static func open(connectedSocket descriptor: Int32, port: Int) async throws -> TestConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try Self.addHTTPHandlers(to: channel.pipeline.syncOperations) }
            }
            .withConnectedSocket(descriptor).get()
        return try await TestConnection(channel: channel, port: port, defaultHost: "127.0.0.1:\(port)")
    }

    /// The client pipeline: NIO's request encoder (automatic framing off) and response decoder (1xx forwarded), then
    /// the exchange handler. This is `addHTTPClientHandlers` minus its header validator, with the two options it
    /// does not expose.
    static func addHTTPHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        var encoderConfiguration = HTTPRequestEncoder.Configuration()
        encoderConfiguration.automaticallySetFramingHeaders = false
        try pipeline.addHandler(HTTPRequestEncoder(configuration: encoderConfiguration))
        try pipeline.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        try pipeline.addHandler(TestClientHandler())
    }

    /// Whether the connection is still open (false once either side closed it).
    var isActive: Bool {
        self.channel.isActive
    }

    /// The local (client-side) port of this connection.
    var localPort: Int? {
        self.channel.localAddress?.port
    }

    /// Sends one request and returns the complete response (see the type's notes for what is added).
    func send(
        method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        version: HTTPVersion = .http1_1, timeout: Duration = TestClient.defaultTimeout
    ) async throws -> TestResponse {
        let request = self.makeRequest(
            method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout)
        let promise = self.channel.eventLoop.makePromise(of: TestResponse.self)
        return try await self.run(request, sink: .buffered(promise), result: promise.futureResult)
    }

    /// Sends one request and returns as soon as the final response head has arrived; the body is delivered chunk
    /// by chunk as it arrives (for server-sent events). The connection stays usable after the stream has finished;
    /// abandoning the stream (its consumer cancelled) closes the connection.
    func stream(
        method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        version: HTTPVersion = .http1_1, timeout: Duration = TestClient.defaultTimeout
    ) async throws -> TestStream {
        try await self.stream(
            method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout,
            closeWhenFinished: false)
    }

    func stream(
        method: String, uri: String, headers: [(String, String)], body: TestBody, version: HTTPVersion,
        timeout: Duration, closeWhenFinished: Bool
    ) async throws -> TestStream {
        let request = self.makeRequest(
            method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout)
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        let channel = self.channel
        continuation.onTermination = { termination in
            if closeWhenFinished {
                channel.close(promise: nil)
            } else if case .cancelled = termination {
                channel.close(promise: nil)
            }
        }
        let promise = self.channel.eventLoop.makePromise(of: (HTTPResponseHead, [HTTPResponseHead]).self)
        let (head, informational) = try await self.run(
            request, sink: .streaming(promise, continuation), result: promise.futureResult)
        return TestStream(head: head, informational: informational, chunks: chunks, connection: self)
    }

    /// Sends one request and closes the connection abruptly at `point`; returns the final response head if one
    /// had arrived by then (if the response completed first, the connection is closed right after it).
    func abort(
        method: String = "GET", uri: String, headers: [(String, String)] = [], body: TestBody = .none,
        at point: TestClient.AbortPoint, version: HTTPVersion = .http1_1,
        timeout: Duration = TestClient.defaultTimeout
    ) async throws -> HTTPResponseHead? {
        let request = self.makeRequest(
            method: method, uri: uri, headers: headers, body: body, version: version, timeout: timeout)
        let promise = self.channel.eventLoop.makePromise(of: HTTPResponseHead?.self)
        let head = try await self.run(request, sink: .abort(promise, point), result: promise.futureResult)
        // Leaves for certain: a response that ended before the abort point left the connection open, and waiting
        // for the server to close it could wait forever.
        await self.close()
        return head
    }

    /// Waits until the connection is closed (by the server, typically); `TestSupportError.timedOut` otherwise.
    func waitForClose(timeout: Duration = TestClient.defaultTimeout) async throws {
        let channel = self.channel
        // Whichever comes first wins; NIO ignores the second completion of a promise.
        let closed = channel.eventLoop.makePromise(of: Bool.self)
        channel.closeFuture.whenComplete { _ in closed.succeed(true) }
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { closed.succeed(false) }
        defer { timer.cancel() }
        guard try await closed.futureResult.get() else {
            throw TestSupportError.timedOut("waiting for the server to close the connection", after: timeout)
        }
    }

    /// Closes the connection (idempotent).
    func close() async {
        try? await self.channel.close()
    }

    // MARK: - Internals

    private func run<T: Sendable>(
        _ request: TestClientHandler.Request, sink: TestClientHandler.Sink, result: EventLoopFuture<T>
    ) async throws -> T {
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute { handler.value.start(request, sink: sink) }
        return try await withTaskCancellationHandler {
            try await result.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    private func makeRequest(
        method: String, uri: String, headers list: [(String, String)], body: TestBody, version: HTTPVersion,
        timeout: Duration
    ) -> TestClientHandler.Request {
        var headers = HTTPHeaders()
        if !list.contains(where: { $0.0.lowercased() == "host" }) {
            headers.add(name: "Host", value: self.defaultHost)
        }
        headers.add(contentsOf: list)
        let framed = headers.contains(name: "content-length") || headers.contains(name: "transfer-encoding")
        switch body {
        case .none:
            break
        case .bytes(let bytes):
            if !framed {
                headers.add(name: "Content-Length", value: "\(bytes.count)")
            }
        case .stream(let length, let chunked):
            if !framed {
                headers.add(
                    name: chunked ? "Transfer-Encoding" : "Content-Length", value: chunked ? "chunked" : "\(length)")
            }
        }
        let expectContinue =
            !body.isNone && headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
        let head = HTTPRequestHead(version: version, method: HTTPMethod(rawValue: method), uri: uri, headers: headers)
        return TestClientHandler.Request(head: head, body: body, expectContinue: expectContinue, timeout: timeout)
    }
}
