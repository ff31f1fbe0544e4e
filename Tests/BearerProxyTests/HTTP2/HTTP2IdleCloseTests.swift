import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import BearerDataPlane
@testable import BearerTelemetry

/// An HTTP/2 client connection's idle limit, on an `EmbeddedChannel` whose clock the test moves: the connection asks
/// for its graceful close (``ChannelShouldQuiesceEvent``, which NIOHTTP2's connection-management handler turns into
/// GOAWAY) once it has had no stream open for the whole limit, and never while one is open.
@Suite("An HTTP/2 client connection's idle limit")
struct HTTP2IdleCloseTests {
    static let limit = TimeAmount.seconds(60)

    /// Counts the graceful closes asked for.
    final class QuiesceRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        var asked = 0

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent { asked += 1 }
        }
    }

    struct Connection {
        let channel: EmbeddedChannel
        let recorder: QuiesceRecorder

        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init() throws {
            channel = EmbeddedChannel()
            let handler = HTTP2IdleClose(metrics: ProxyMetrics(), idleLimit: HTTP2IdleCloseTests.limit)
            recorder = QuiesceRecorder()
            try channel.pipeline.syncOperations.addHandlers([handler, recorder])
        }

        /// What NIOHTTP2 sends up the pipeline as a stream opens, and as it closes.
        func open(_ id: Int) {
            channel.pipeline.fireUserInboundEventTriggered(
                NIOHTTP2StreamCreatedEvent(
                    streamID: HTTP2StreamID(id), localInitialWindowSize: 65535, remoteInitialWindowSize: 65535))
        }
        func close(_ id: Int) {
            channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: HTTP2StreamID(id), reason: nil))
        }

        /// Moves the clock to the end of the limit: no close asked for 1 ms before it, one at it.
        func expectClosesAtLimit(sourceLocation: SourceLocation = #_sourceLocation) {
            loop.advanceTime(by: HTTP2IdleCloseTests.limit - .milliseconds(1))
            #expect(recorder.asked == 0, "closed before the limit", sourceLocation: sourceLocation)
            loop.advanceTime(by: .milliseconds(1))
            #expect(recorder.asked == 1, "not closed at the limit", sourceLocation: sourceLocation)
        }
    }

    @Test("a connection that never opens a stream is closed when the limit is reached, not before")
    func unused() throws {
        try Connection().expectClosesAtLimit()
    }

    @Test("a stream open past the limit keeps the connection; the limit starts again when the last stream closes")
    func openStreamKeepsIt() throws {
        let connection = try Connection()
        connection.loop.advanceTime(by: .seconds(30))
        connection.open(1)
        connection.open(3)
        connection.loop.advanceTime(by: Self.limit * 3)
        connection.close(1)
        connection.loop.advanceTime(by: Self.limit * 2)
        #expect(connection.recorder.asked == 0)
        connection.close(3)
        connection.expectClosesAtLimit()
    }

    @Test("each stream restarts the limit from its close, however briefly it was open")
    func streamsRestartIt() throws {
        let connection = try Connection()
        for id in [1, 3, 5] {
            connection.loop.advanceTime(by: Self.limit - .seconds(1))
            connection.open(id)
            connection.close(id)
        }
        #expect(connection.recorder.asked == 0)
        connection.expectClosesAtLimit()
        // Asked once: the connection is closing.
        connection.loop.advanceTime(by: Self.limit * 3)
        #expect(connection.recorder.asked == 1)
    }
}
