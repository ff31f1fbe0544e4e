import NIOCore
import NIOEmbedded
import Testing

@testable import BearerDataPlane

/// The client writer on its own: what reaches the pipeline, write by write, for a held head and the parts after it.
/// The end-to-end behaviour through a proxy is ``ResponseCoalescingTests``'.
@Suite("ClientWriter: framing, the held head, the limit on what is held")
struct ClientWriterTests {
    /// A pipeline whose one handler gives the writer a context; each write down it is one outbound buffer.
    final class Writing: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
    }

    static func withWriter(_ body: (inout ClientWriter, ChannelHandlerContext, EmbeddedChannel) throws -> Void) throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(Writing())
        let context = try channel.pipeline.syncOperations.context(handlerType: Writing.self)
        var writer = ClientWriter()
        try body(&writer, context, channel)
        _ = try channel.finish()
    }

    static func writes(_ channel: EmbeddedChannel) throws -> [String] {
        // An embedded channel hands writes out once they are flushed.
        channel.flush()
        var out: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { out.append(String(buffer: buffer)) }
        return out
    }

    static let head = "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n"

    /// Writes `text` as a response head, in the writer's own head buffer.
    static func writeHead(
        _ writer: inout ClientWriter, _ context: ChannelHandlerContext, text: String = head, chunked: Bool = false
    ) {
        var bytes = writer.headBuffer()
        bytes.writeString(text)
        writer.writeHead(bytes, chunked: chunked, from: context)
    }

    @Test("a head whose body goes as it is is held, and small body parts join it: one write")
    func coalesces() throws {
        try Self.withWriter { writer, context, channel in
            Self.writeHead(&writer, context)
            #expect(writer.holdsHead)
            writer.write(.body(ByteBuffer(string: "hello")), from: context, promise: nil)
            writer.write(.body(ByteBuffer(string: "world")), from: context, promise: nil)
            let written1 = try Self.writes(channel)
            #expect(written1.isEmpty, "nothing goes down the pipeline while it is held")
            writer.writeHeld(from: context)
            #expect(!writer.holdsHead)
            let written2 = try Self.writes(channel)
            #expect(written2 == [Self.head + "helloworld"])
        }
    }

    @Test("a part that does not fit is written as it is, after the head, never copied into it")
    func largePartAfterHead() throws {
        try Self.withWriter { writer, context, channel in
            Self.writeHead(&writer, context)
            let large = String(repeating: "L", count: ClientWriter.coalescedLimit)
            writer.write(.body(ByteBuffer(string: large)), from: context, promise: nil)
            let written3 = try Self.writes(channel)
            #expect(written3.map(\.utf8.count) == [Self.head.utf8.count, large.utf8.count])
            #expect(written3.last == large)
        }
    }

    @Test("however many small parts an upstream sends, no write is larger than the limit, and no byte is lost")
    func heldIsBounded() throws {
        try Self.withWriter { writer, context, channel in
            Self.writeHead(&writer, context)
            let part = String(repeating: "x", count: 100)
            for _ in 0..<1000 { writer.write(.body(ByteBuffer(string: part)), from: context, promise: nil) }
            writer.writeHeld(from: context)
            let writes = try Self.writes(channel)
            #expect(writes.allSatisfy { $0.utf8.count <= ClientWriter.coalescedLimit })
            #expect(writes.joined() == Self.head + String(repeating: part, count: 1000))
        }
    }

    @Test("a write that carries a promise, or asks for a flush, is not appended: the held head goes first")
    func promiseAndFlushGoAlone() throws {
        try Self.withWriter { writer, context, channel in
            Self.writeHead(&writer, context)
            let promise = channel.eventLoop.makePromise(of: Void.self)
            writer.write(.body(ByteBuffer(string: "end")), from: context, promise: promise)
            let written4 = try Self.writes(channel)
            #expect(written4 == [Self.head, "end"])
            writer.write(.body(ByteBuffer(string: "more")), from: context, promise: nil, flush: true)
            let written5 = try Self.writes(channel)
            #expect(written5 == ["more"])
            #expect(!writer.holdsHead)
        }
    }

    @Test("a chunked head is written at once, and its body parts go as chunks, then the last chunk")
    func chunked() throws {
        try Self.withWriter { writer, context, channel in
            Self.writeHead(
                &writer, context, text: "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", chunked: true)
            #expect(!writer.holdsHead)
            writer.write(.body(ByteBuffer(string: "hello")), from: context, promise: nil)
            writer.write(.end(trailers: nil), from: context, promise: nil)
            let stream = try Self.writes(channel).joined()
            #expect(
                stream
                    == "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        }
    }
}
