import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import BearerDataPlane
@testable import BearerTelemetry

/// The stream table on an `EmbeddedChannel` whose clock the test moves, fed the frames NIOHTTP2 would pass up (and the
/// events it would send), with nothing installed: every request is answered `503` at once, which leaves each stream's
/// own limits and the table's bookkeeping to look at.
@Suite("HTTP/2 clients: the stream table")
struct HTTP2StreamTableTests {
    static let head = TimeAmount.seconds(10)
    static let stall = TimeAmount.seconds(20)

    struct Connection {
        let channel: EmbeddedChannel
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

        init() throws {
            channel = EmbeddedChannel()
            var timeouts = ProxyTimeouts()
            timeouts.requestHead = HTTP2StreamTableTests.head
            timeouts.bodyStall = HTTP2StreamTableTests.stall
            timeouts.clientIdle = .seconds(600)
            let core = ProxyServerCore(
                installed: NothingInstalled(), logger: ProxyHarness.silentLogger, metrics: ProxyMetrics(),
                timeouts: timeouts)
            try channel.pipeline.syncOperations.addHandler(
                HTTP2StreamTable(core: core, loop: EventLoopState(eventLoop: channel.embeddedEventLoop)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        /// A POST whose body is to be 10 bytes, on `stream`, with `sent` of them.
        func post(on stream: Int, sending sent: String) throws {
            var headers = HPACKHeaders([(":method", "POST"), (":scheme", "http"), (":path", "/-/health")])
            headers.add(name: ":authority", value: "127.0.0.1")
            headers.add(name: "content-length", value: "10")
            let id = HTTP2StreamID(stream)
            try channel.writeInbound(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers))))
            try channel.writeInbound(
                HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: sent))))))
            channel.pipeline.fireChannelReadComplete()
            loop.run()
        }

        /// The frames written since the last call, by stream.
        func written() throws -> [(stream: Int, frame: HTTP2Frame.FramePayload)] {
            var frames: [(Int, HTTP2Frame.FramePayload)] = []
            while let frame = try channel.readOutbound(as: HTTP2Frame.self) {
                frames.append((Int(Int32(frame.streamID)), frame.payload))
            }
            return frames
        }

        /// The streams reset since the last call.
        func resets() throws -> [Int] {
            try written().compactMap { written in
                if case .rstStream = written.frame { return written.stream }
                return nil
            }
        }
    }

    @Test("each stream's body-stall limit runs from its own last byte, on the connection's one timer")
    func streamsKeepTheirOwnLimits() throws {
        let connection = try Connection()
        try connection.post(on: 1, sending: "ab")
        let answer = try connection.written()
        #expect(
            answer.contains { written in
                if case .headers(let headers) = written.frame { return headers.headers.first(name: ":status") == "503" }
                return false
            }, "stream 1 was not answered: \(answer)")
        connection.loop.advanceTime(by: .seconds(15))
        try connection.post(on: 3, sending: "ab")
        _ = try connection.written()
        // Stream 1 has waited 20 s for the rest of its body, stream 3 only 5 s.
        connection.loop.advanceTime(by: .seconds(5) - .milliseconds(1))
        #expect(try connection.resets() == [])
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(try connection.resets() == [1])
        // Stream 3's bytes keep coming: its limit starts again from each.
        connection.loop.advanceTime(by: .seconds(10))
        try connection.channel.writeInbound(
            HTTP2Frame(streamID: 3, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: "cd"))))))
        connection.channel.pipeline.fireChannelReadComplete()
        connection.loop.advanceTime(by: Self.stall - .milliseconds(1))
        #expect(try connection.resets() == [])
        connection.loop.advanceTime(by: .milliseconds(1))
        #expect(try connection.resets() == [3])
        #expect(connection.channel.isActive, "a stream's limit closed the connection")
    }

    @Test("a stream NIOHTTP2 closes ends its exchange; frames for it after that are dropped, and a lower id opens none")
    func closedStreams() throws {
        let connection = try Connection()
        try connection.post(on: 5, sending: "ab")
        _ = try connection.written()
        connection.channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: 5, reason: .cancel))
        connection.loop.run()
        try connection.post(on: 5, sending: "cd")
        try connection.post(on: 3, sending: "cd")
        #expect(try connection.written().isEmpty)
        // Its limit no longer applies: nothing is reset when it passes.
        connection.loop.advanceTime(by: Self.stall * 2)
        #expect(try connection.written().isEmpty)
        try connection.post(on: 7, sending: "ab")
        #expect(try connection.written().contains { $0.stream == 7 })
    }

    @Test("a stream and its handler are freed once the stream ends, and once the connection does, mid-exchange")
    func freed() throws {
        weak var ended: HTTP2ClientStream?
        weak var endedHandler: ProxyConnectionHandler?
        weak var open: HTTP2ClientStream?
        weak var openHandler: ProxyConnectionHandler?
        do {
            let connection = try Connection()
            let table = try connection.channel.pipeline.syncOperations.handler(type: HTTP2StreamTable.self)
            try connection.post(on: 1, sending: "ab")
            try connection.post(on: 3, sending: "ab")
            ended = table.streams[1]
            endedHandler = ended?.handler
            open = table.streams[3]
            openHandler = open?.handler
            #expect(endedHandler != nil && openHandler != nil)
            connection.channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: 1, reason: .cancel))
            connection.loop.run()
            #expect(ended == nil, "the ended stream is still alive")
            #expect(endedHandler == nil, "the ended stream's handler is still alive")
            #expect(open != nil, "the open stream was let go of")
            _ = try connection.channel.finish(acceptAlreadyClosed: true)
            connection.loop.run()
        }
        #expect(open == nil, "a stream outlived its connection")
        #expect(openHandler == nil, "a stream's handler outlived its connection")
    }

    @Test("the connection's window is given back as DATA arrives, a stream's as its exchange takes the DATA")
    func windows() throws {
        let connection = try Connection()
        try connection.post(on: 1, sending: "ab")
        _ = try connection.written()
        // NIOHTTP2 says what is left of each window once DATA has come: below half the target, it is topped up.
        connection.channel.pipeline.fireUserInboundEventTriggered(
            NIOHTTP2WindowUpdatedEvent(streamID: .rootStream, inboundWindowSize: 20_000, outboundWindowSize: nil))
        connection.channel.pipeline.fireUserInboundEventTriggered(
            NIOHTTP2WindowUpdatedEvent(streamID: 1, inboundWindowSize: 40_000, outboundWindowSize: nil))
        connection.channel.pipeline.fireUserInboundEventTriggered(
            NIOHTTP2WindowUpdatedEvent(streamID: 1, inboundWindowSize: 30_000, outboundWindowSize: nil))
        let updates = try connection.written().compactMap { written -> [Int]? in
            if case .windowUpdate(let increment) = written.frame { return [written.stream, increment] }
            return nil
        }
        #expect(
            updates == [[0, HTTP2StreamTable.windowTarget - 20_000], [1, HTTP2StreamTable.windowTarget - 30_000]])
    }
}

/// The window rule on its own (RFC 9113 §6.9).
@Suite("HTTP/2 clients: when a window is given back")
struct HTTP2InboundWindowTests {
    @Test("topped up to the target once at half or below; bytes held are not given back until delivered")
    func rule() {
        var window = HTTP2InboundWindow(target: 1000)
        #expect(window.sizeChanged(to: 600) == nil)
        #expect(window.sizeChanged(to: 500) == 500)
        // 400 bytes come and are held: the client's window falls to 200, and none of it is given back yet.
        window.hold(400)
        #expect(window.sizeChanged(to: 200) == nil, "bytes still held were given back")
        #expect(window.delivered(100) == 500)
        #expect(window.sizeChanged(to: 700) == nil)
        #expect(window.delivered(300) == nil, "topped up before half the window was used")
        #expect(window.sizeChanged(to: -100) == 1100, "a window below zero is brought back to the target")
    }
}
