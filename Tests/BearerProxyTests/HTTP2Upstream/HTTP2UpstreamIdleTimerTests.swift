import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import BearerDataPlane

/// An HTTP/2 upstream connection's idle probe, on an `EmbeddedChannel` whose clock the test moves: one timer for
/// the connection's life, which streams opening and closing leave alone; a PING (RFC 9113 §6.7) a whole
/// ``HTTP2UpstreamConnection/Idle/pingInterval`` after the last stream closed, never sooner; no stream while its ACK
/// is awaited; closed when the ACK does not come; GOAWAY `NO_ERROR` (RFC 9113 §6.8) at the idle limit.
@Suite("An HTTP/2 upstream connection's idle timer")
struct HTTP2UpstreamIdleTimerTests {
    static let idle = HTTP2UpstreamConnection.Idle(
        limit: .seconds(30), pingInterval: .seconds(10), pingTimeout: .seconds(5))

    /// Sits between NIOHTTP2's handler and the connection: records the frames the connection writes on stream 0, and
    /// hands the connection frames as if the upstream had sent them.
    final class Frames: ChannelDuplexHandler {
        typealias InboundIn = HTTP2Frame
        typealias InboundOut = HTTP2Frame
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        var pings: [HTTP2PingData] = []
        var goAways: [HTTP2ErrorCode] = []
        private var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data).payload {
            case .ping(let data, ack: false): pings.append(data)
            case .goAway(_, let code, _): goAways.append(code)
            default: break
            }
            context.write(data, promise: promise)
        }

        /// `frame` from the upstream, as NIOHTTP2 hands it on.
        func receive(_ frame: HTTP2Frame) {
            context?.fireChannelRead(wrapInboundOut(frame))
        }
    }

    struct Connection {
        let channel: EmbeddedChannel
        let connection: HTTP2UpstreamConnection
        let frames: Frames

        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init() throws {
            channel = EmbeddedChannel()
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            let pipeline = channel.pipeline.syncOperations
            let multiplexer = try HTTP2Connector.configure(channel)
            frames = Frames()
            connection = HTTP2UpstreamConnection(
                origin: try UpstreamPoolTests.origin("http://127.0.0.1:1"), multiplexer: multiplexer,
                idle: HTTP2UpstreamIdleTimerTests.idle
            ) { _ in }
            try pipeline.addHandlers([frames, connection])
            // The upstream's preface: an empty SETTINGS frame (RFC 9113 §3.4, §6.5).
            try channel.writeInbound(ByteBuffer(bytes: [0, 0, 0, 4, 0, 0, 0, 0, 0]))
        }

        /// A stream opened and, `open` later, closed: the close is told to the connection as its stream tells it (the
        /// stream's channel stays open).
        func exchange(lasting open: TimeAmount) throws {
            _ = try #require(connection.openStream())
            loop.advanceTime(by: open)
            connection.streamClosed()
        }

        /// Moves the clock by `delay`: no PING 1 ms before it, one at it.
        func expectPing(in delay: TimeAmount, sourceLocation: SourceLocation = #_sourceLocation) {
            let before = frames.pings.count
            loop.advanceTime(by: delay - .milliseconds(1))
            #expect(frames.pings.count == before, "a PING before its time", sourceLocation: sourceLocation)
            loop.advanceTime(by: .milliseconds(1))
            #expect(frames.pings.count == before + 1, "no PING at its time", sourceLocation: sourceLocation)
        }

        /// The upstream acknowledges the last PING.
        func acknowledge() throws {
            let ping = try #require(frames.pings.last)
            frames.receive(HTTP2Frame(streamID: .rootStream, payload: .ping(ping, ack: true)))
        }

        func finish() {
            _ = try? channel.finish(acceptAlreadyClosed: true)
        }
    }

    @Test("streams opening and closing leave the one timer alone; the PING comes an interval after the last close")
    func streamsLeaveTheTimer() throws {
        let connection = try Connection()
        defer { connection.finish() }
        let timer = try #require(connection.connection.idleTimer?.futureResult)
        // Three exchanges within the first interval: closes at 3 s, 6 s and 9 s.
        for _ in 0..<3 {
            connection.loop.advanceTime(by: .seconds(2))
            try connection.exchange(lasting: .seconds(1))
        }
        #expect(connection.connection.idleTimer?.futureResult === timer, "the timer was cancelled and scheduled again")
        // At 10 s the timer finds the connection idle for 1 s only: it waits for the rest, to 19 s.
        connection.expectPing(in: .seconds(10))
    }

    @Test("a stream open across the timer: looked at again an interval on; the PING an interval after its close")
    func streamOpenAcrossTheTimer() throws {
        let connection = try Connection()
        defer { connection.finish() }
        connection.loop.advanceTime(by: .seconds(5))
        // Open from 5 s to 25 s: the timer fires at 10 s and 20 s with it open, then at 30 s, 5 s after its close.
        try connection.exchange(lasting: .seconds(20))
        #expect(connection.frames.pings.isEmpty)
        connection.expectPing(in: .seconds(10))
    }

    @Test("a PING is answered: no stream meanwhile; the next an interval after the ACK; GOAWAY NO_ERROR at the limit")
    func answeredThenRetired() throws {
        let connection = try Connection()
        defer { connection.finish() }
        connection.expectPing(in: .seconds(10))
        // The upstream may be gone: no exchange is put on it until it answers (RFC 9113 §6.7).
        #expect(!connection.connection.hasRoom)
        #expect(connection.connection.openStream() == nil)
        connection.loop.advanceTime(by: .seconds(1))
        try connection.acknowledge()
        #expect(connection.connection.hasRoom)
        connection.expectPing(in: .seconds(10))
        connection.loop.advanceTime(by: .seconds(1))
        try connection.acknowledge()
        // Idle since 0 s, acknowledged at 22 s: the limit comes before another interval.
        connection.loop.advanceTime(by: .seconds(8) - .milliseconds(1))
        #expect(connection.frames.goAways.isEmpty, "retired before the limit")
        #expect(connection.channel.isActive)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(connection.frames.goAways == [.noError])
        #expect(!connection.channel.isActive)
        #expect(connection.frames.pings.count == 2)
    }

    @Test("a PING without its ACK for the timeout: closed, without GOAWAY, and no stream before")
    func unansweredIsClosed() throws {
        let connection = try Connection()
        defer { connection.finish() }
        connection.expectPing(in: .seconds(10))
        connection.loop.advanceTime(by: .seconds(5) - .milliseconds(1))
        #expect(connection.channel.isActive)
        #expect(connection.connection.openStream() == nil)
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(!connection.channel.isActive)
        #expect(connection.frames.goAways.isEmpty)
    }
}
