import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An upstream for attacks: it records exactly the bytes it receives on each connection — on the wire (so a
/// cleartext request on its TLS port shows as bytes that are not a ClientHello) and after TLS — and frames them the
/// way a real HTTP/1.1 server does, with NIO's request decoder, answering every request it finds in order (so
/// smuggled bytes show as extra requests). Answers are scripted per request; `.held` ones wait for the test.
///
///     let upstream = try await RawUpstream.start { request in .respond(status: 200) }
///     ... run the proxy against upstream.baseURL, attack it ...
///     #expect(upstream.requests.count == 1)
final class RawUpstream: TestServer {
    /// How the upstream answers one request.
    enum Answer: Sendable {
        /// A well-formed response with `content-length`.
        case respond(status: Int, headers: [(String, String)] = [], body: String = "")
        /// These bytes, exactly, on the connection (through TLS when the upstream speaks it) — a hostile upstream.
        case raw(String)
        /// ``raw(_:)``, then the connection closes once they are written: an answer whose body ends with the close
        /// (RFC 9112 §6.3 rule 8).
        case rawThenClose(String)
        /// Closes the connection without a byte.
        case close
        /// Waits until the test calls ``release(with:)``.
        case held
    }

    let tls: Bool
    private let server: FakeHTTPServer
    let state: RawUpstreamState

    var port: Int { server.port }

    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }

    private init(tls: Bool, server: FakeHTTPServer, state: RawUpstreamState) {
        self.tls = tls
        self.server = server
        self.state = state
    }

    /// Starts listening on 127.0.0.1:0; `answer` is called on the connection's event loop for every complete
    /// request.
    static func start(tls: Bool = false, answer: @escaping @Sendable (RawRequest) -> Answer) async throws
        -> RawUpstream
    {
        let sslContext = tls ? try TLSFixtures.serverContext() : nil
        let state = RawUpstreamState(timerLoop: MultiThreadedEventLoopGroup.singleton.any())
        let server = try await FakeHTTPServer.start(
            opened: state.connectionOpened, closed: state.connectionClosed
        ) { channel, connection in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(RawByteRecorder(state: state, connection: connection, layer: .wire))
            if let sslContext {
                try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            let plain = RawByteRecorder(state: state, connection: connection, layer: .plain)
            try pipeline.addHandler(plain)
            try pipeline.addHandler(HTTPResponseEncoder())
            try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
            try pipeline.addHandler(
                RawUpstreamHandler(state: state, connection: connection, plain: plain, answer: answer))
        }
        return RawUpstream(tls: tls, server: server, state: state)
    }

    /// Every request framed so far, in arrival order.
    var requests: [RawRequest] { state.read(\.requests) }

    /// The bytes received on connection `id` (1-based, accept order), on the wire or after TLS.
    func received(on id: Int, _ layer: RawByteRecorder.Layer) -> [UInt8] {
        state.read { $0.connections[id]?.bytes(layer) ?? [] }
    }

    /// How many connections were accepted.
    var acceptedConnections: Int { state.read(\.connections.count) }

    /// Waits until `n` complete requests have been framed.
    func waitForRequests(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await state.wait(for: "\(n) request(s)", timeout: timeout) { $0.requests.count >= n }
    }

    /// Waits until `n` connections have been accepted (the kernel may complete a connect before the server's event
    /// loop has accepted it).
    func waitForAcceptedConnections(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await state.wait(for: "\(n) accepted connection(s)", timeout: timeout) { $0.connections.count >= n }
    }

    /// Waits until `n` connections have closed.
    func waitForClosedConnections(_ n: Int, timeout: Duration = .seconds(30)) async throws {
        try await state.wait(for: "\(n) closed connection(s)", timeout: timeout) { $0.closed >= n }
    }

    /// Runs `body` with a raw upstream, shutting it down afterwards whatever happens.
    static func with<T>(
        tls: Bool = false, answer: @escaping @Sendable (RawRequest) -> Answer,
        _ body: (RawUpstream) async throws -> T
    ) async throws -> T {
        try await using(try await start(tls: tls, answer: answer), body)
    }

    /// Closes every open connection (the upstream going away mid-answer) and keeps listening.
    func closeOpenConnections() async {
        for channel in state.openChannels {
            try? await channel.close()
        }
    }

    /// Answers every request held so far with `answer`.
    func release(with answer: Answer) {
        for held in state.takeHeld() { held(answer) }
    }

    func shutdown() async {
        await server.shutdown(closing: state.shutDown())
    }
}

/// One request as the raw upstream framed it.
struct RawRequest: Sendable {
    let connection: Int
    let method: String
    let uri: String
    let headers: [(String, String)]
    var body: [UInt8] = []
    var trailers: [(String, String)] = []

    func header(_ name: String) -> [String] {
        headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}
