import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// The idle keep-alive limit of a client connection, on an `EmbeddedChannel` whose clock the test moves: real
/// sockets on a loaded machine have stalled for seconds between a connect and its first request, which no limit
/// short enough for a test can tell apart from idleness.
@Suite("A client connection's idle limit")
struct IdleConnectionTests {
    static let idle = TimeAmount.seconds(60)

    /// A connected channel running the proxy's connection handler with nothing installed (requests get 503
    /// "starting": this is about the connection, not the answer).
    static func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        var timeouts = ProxyTimeouts()
        timeouts.clientIdle = idle
        // About the idle limit alone: a request whose end never comes is not cut short by the body-stall limit.
        timeouts.bodyStall = idle * 10
        let core = ProxyServerCore(
            installed: NothingInstalled(), logger: ProxyHarness.silentLogger, metrics: ProxyMetrics(),
            timeouts: timeouts)
        try channel.pipeline.syncOperations.addHandler(
            ProxyConnectionHandler(server: core, loop: EventLoopState(eventLoop: channel.embeddedEventLoop)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// A request's head announcing a one-byte body, and that byte: the request's end comes with it.
    static let head = ByteBuffer(string: "GET /-/health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n")
    static let end = ByteBuffer(string: "x")

    /// Moves the clock to the end of the limit: the connection must be open 1 ms before it and closed at it.
    static func expectClosesAtLimit(_ channel: EmbeddedChannel, sourceLocation: SourceLocation = #_sourceLocation) {
        channel.embeddedEventLoop.advanceTime(by: idle - .milliseconds(1))
        #expect(channel.isActive, "closed before the limit", sourceLocation: sourceLocation)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "still open at the limit", sourceLocation: sourceLocation)
    }

    @Test("a connection that never sends a request is closed when the limit is reached, not before")
    func closesUnused() throws {
        Self.expectClosesAtLimit(try Self.connection())
    }

    @Test("an exchange in progress keeps the connection past the limit; the limit starts again when it ends")
    func exchangeKeepsItOpen() throws {
        let channel = try Self.connection()
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        try channel.writeInbound(Self.head)
        // The request's end has not come: the exchange is still in progress long after the limit.
        channel.embeddedEventLoop.advanceTime(by: Self.idle * 3)
        #expect(channel.isActive)
        // The proxy writes bytes: the head is the first buffer.
        guard let bytes = try channel.readOutbound(as: ByteBuffer.self) else {
            Issue.record("no response head")
            return
        }
        #expect(try HTTPResponseHead(written: bytes).status == .serviceUnavailable)

        try channel.writeInbound(Self.end)
        Self.expectClosesAtLimit(channel)
    }

    @Test("each request on a keep-alive connection restarts the limit")
    func requestsRestartIt() throws {
        let channel = try Self.connection()
        for _ in 0..<3 {
            channel.embeddedEventLoop.advanceTime(by: Self.idle - .seconds(1))
            #expect(channel.isActive)
            try channel.writeInbound(Self.head)
            try channel.writeInbound(Self.end)
        }
        Self.expectClosesAtLimit(channel)
    }
}

/// A proxy before its first configuration: every request is answered 503 "starting".
struct NothingInstalled: GenerationSource {
    func beginExchange() -> ProxyContext? { nil }
    var peerUsers: PeerUserPolicy? { nil }
}
