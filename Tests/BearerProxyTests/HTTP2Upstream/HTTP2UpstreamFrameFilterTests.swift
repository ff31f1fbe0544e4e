import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import BearerDataPlane

/// What reaches an upstream stream's channel, which holds every frame while its exchange is not reading: never a
/// WINDOW_UPDATE or PRIORITY frame, and no more than 16 interim responses a stream.
@Suite("HTTP/2 upstreams: the frames a stream's channel is given")
struct HTTP2UpstreamFrameFilterTests {
    static func head(_ status: String, on stream: HTTP2StreamID) -> HTTP2Frame {
        HTTP2Frame(streamID: stream, payload: .headers(.init(headers: HPACKHeaders([(":status", status)]))))
    }

    static func passed(_ channel: EmbeddedChannel) throws -> [HTTP2Frame] {
        var frames: [HTTP2Frame] = []
        while let frame = try channel.readInbound(as: HTTP2Frame.self) { frames.append(frame) }
        return frames
    }

    @Test("a stream's WINDOW_UPDATE and PRIORITY frames stop here; the connection's frames and a stream's others pass")
    func dropped() throws {
        let filter = HTTP2UpstreamFrameFilter()
        let channel = EmbeddedChannel(handler: filter)
        for _ in 0..<10_000 {
            try channel.writeInbound(HTTP2Frame(streamID: 1, payload: .windowUpdate(windowSizeIncrement: 1)))
            try channel.writeInbound(
                HTTP2Frame(streamID: 1, payload: .priority(.init(exclusive: false, dependency: 0, weight: 16))))
        }
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: 1)))
        try channel.writeInbound(Self.head("200", on: 1))
        try channel.writeInbound(
            HTTP2Frame(streamID: 1, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: "x")), endStream: true))))
        let passed = try Self.passed(channel)
        // Counted first: 20,000 frames that got through would make an unreadable failure.
        #expect(passed.count == 3)
        if passed.count == 3 { #expect(passed.map { Int(Int32($0.streamID)) } == [0, 1, 1]) }
        _ = try channel.finish()
    }

    @Test("16 interim responses pass; the 17th resets the stream with ENHANCE_YOUR_CALM; the count is per stream")
    func interim() throws {
        let filter = HTTP2UpstreamFrameFilter()
        let channel = EmbeddedChannel(handler: filter)
        let limit = HTTP2UpstreamFrameFilter.maximumInterimResponses
        for n in 0..<limit { try channel.writeInbound(Self.head(n % 2 == 0 ? "103" : "100", on: 1)) }
        try channel.writeInbound(Self.head("102", on: 3))
        #expect(try Self.passed(channel).count == limit + 1)
        #expect(try channel.readOutbound(as: HTTP2Frame.self) == nil)

        try channel.writeInbound(Self.head("103", on: 1))
        #expect(try Self.passed(channel).isEmpty)
        let reset = try #require(try channel.readOutbound(as: HTTP2Frame.self))
        #expect(reset.streamID == 1)
        guard case .rstStream(let code) = reset.payload else {
            Issue.record("not a reset: \(reset.payload)")
            return
        }
        #expect(code == .enhanceYourCalm)
        #expect(filter.interimResponses[1] == nil)

        // Stream 3's final response ends its count; a stream's close ends it too.
        try channel.writeInbound(Self.head("200", on: 3))
        #expect(filter.interimResponses.isEmpty)
        try channel.writeInbound(Self.head("103", on: 5))
        channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: 5, reason: nil))
        #expect(filter.interimResponses.isEmpty)
        _ = try channel.finish()
    }
}
