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

/// The request-head and body-stall limits (SPEC §8), on an `EmbeddedChannel` with NIO's real request decoder and
/// a clock the test moves: a client trickling bytes is cut off exactly at the limit, and one that is merely idle
/// between requests is not.
@Suite("A client connection's request-head and body-stall limits")
struct RequestTimeLimitTests {
    static let head = TimeAmount.seconds(10)
    static let stall = TimeAmount.seconds(20)

    /// The proxy's client pipeline (decoder, encoder, connection handler) with nothing installed: every request
    /// gets 503 "starting" — this is about the connection's limits, not the answer.
    static func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        var timeouts = ProxyTimeouts()
        timeouts.requestHead = head
        timeouts.bodyStall = stall
        timeouts.clientIdle = .seconds(60)
        let core = ProxyServerCore(
            installed: NothingInstalled(), logger: ProxyHarness.silentLogger, metrics: ProxyMetrics(),
            timeouts: timeouts)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(
            ProxyConnectionHandler(server: core, loop: EventLoopState(eventLoop: channel.embeddedEventLoop)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Everything the proxy wrote so far, as text.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += String(buffer: buffer)
        }
        return text
    }

    static func send(_ text: String, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    @Test("a request head that has begun must be complete within the limit: 408 problem+json at it, then closed")
    func headLimit() throws {
        let channel = try Self.connection()
        try Self.send("GET /-/health HTTP/1.1\r\nHo", to: channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try Self.send("st: 127.0.0.1\r\nX-Slow: a", to: channel)  // trickling does not move the deadline
        channel.embeddedEventLoop.advanceTime(by: Self.head - .seconds(5) - .milliseconds(1))
        #expect(channel.isActive, "closed before the limit")
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let answer = try Self.written(channel)
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
        #expect(answer.contains("application/problem+json"))
        #expect(answer.contains("\"status\" : 408"))
        #expect(!channel.isActive, "still open at the limit")
    }

    @Test("complete requests and idle time between them never trigger the head limit")
    func headLimitSparesIdleConnections() throws {
        let channel = try Self.connection()
        for _ in 0..<2 {
            try Self.send("GET /-/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", to: channel)
            #expect(try Self.written(channel).hasPrefix("HTTP/1.1 503"))
            channel.embeddedEventLoop.advanceTime(by: Self.head * 3)
            #expect(channel.isActive)
        }
    }

    @Test("a request body that stops flowing is cut off at the stall limit; each arriving byte restarts it")
    func bodyStall() throws {
        let channel = try Self.connection()
        try Self.send("POST /-/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nab", to: channel)
        // Answered at once (nothing installed); the rest of the body is read and discarded, within its limit.
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 503"))
        channel.embeddedEventLoop.advanceTime(by: Self.stall - .milliseconds(1))
        try Self.send("cd", to: channel)
        channel.embeddedEventLoop.advanceTime(by: Self.stall - .milliseconds(1))
        #expect(channel.isActive, "closed although the body kept coming")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "still open after the body stalled for the limit")
    }
}
