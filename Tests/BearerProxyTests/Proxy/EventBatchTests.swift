import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerDataPlane

/// ``EventBatch``: a loop's connections flush what nothing waits on — a request sent upstream, a response on a
/// connection that stays open — together, when the loop's batch of events ends (an `EmbeddedEventLoop`'s `run()`
/// here), each once; and a close never drops what was left for that moment.
@Suite("Flushes wait for the end of the loop's batch of events, and a close sends them first")
struct EventBatchTests {
    typealias Seam = UpstreamSeamTests

    /// Bytes the client connection wrote, without letting the loop's batch end.
    static func writtenSoFar(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test("two connections' requests in one batch: neither is flushed before it ends, each once when it does")
    func requestsWaitForTheBatch() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let connector = Seam.MemoryConnector()
            let loop = EventLoopState(eventLoop: EmbeddedEventLoop(), connector: connector)
            let first = try Seam.connection(proxy, connector: connector, sharing: loop)
            let second = try Seam.connection(proxy, connector: connector, sharing: loop)
            try first.writeInbound(ByteBuffer(string: Seam.request))
            try second.writeInbound(ByteBuffer(string: Seam.request))
            try #require(connector.made.count == 2)
            #expect(connector.made.map(\.written.count) == [2, 2], "both requests written")
            #expect(connector.made.map(\.flushedAt) == [[], []], "neither flushed while the batch runs")
            first.embeddedEventLoop.run()
            #expect(connector.made.map(\.flushedAt) == [[2], [2]], "each flushed once, when it ended")
            _ = try? first.finish()
            _ = try? second.finish()
        }
    }

    /// A client connection whose request the upstream has answered `hello`, in a batch of events not yet ended.
    static func withAnsweredRequest(_ body: (EmbeddedChannel) throws -> Void) async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let connector = Seam.MemoryConnector()
            let channel = try Seam.connection(proxy, connector: connector)
            try Seam.deliver(Seam.request, to: channel)
            try #require(connector.made.first).answer(.ok, body: "hello")
            try body(channel)
            channel.embeddedEventLoop.run()
            _ = try? channel.finish()
        }
    }

    @Test("a response on a connection that stays open is flushed when the batch ends, not before")
    func responseWaitsForTheBatch() async throws {
        try await Self.withAnsweredRequest { channel throws in
            #expect(try Self.writtenSoFar(channel).isEmpty, "written, not yet flushed")
            channel.embeddedEventLoop.run()
            #expect(try Self.writtenSoFar(channel).hasSuffix("\r\n\r\nhello"))
        }
    }

    /// The proxy closes an idle connection when the server quiesces — here in the same batch as the response that
    /// made it idle, whose flush was left for the batch's end.
    @Test("the proxy's own close in the same batch sends the response left for the batch's end first")
    func ownCloseSendsTheBatchedResponse() async throws {
        try await Self.withAnsweredRequest { channel throws in
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            #expect(!channel.isActive, "an idle connection closes when the server quiesces")
            #expect(try Self.writtenSoFar(channel).hasSuffix("\r\n\r\nhello"), "the response went before the close")
        }
    }

    @Test("a close from outside the handler in the same batch sends the batched response first")
    func outsideCloseSendsTheBatchedResponse() async throws {
        try await Self.withAnsweredRequest { channel throws in
            channel.close(promise: nil)
            #expect(try Self.writtenSoFar(channel).hasSuffix("\r\n\r\nhello"), "the response went before the close")
            // The batch still ends, for a connection that has left: nothing more is written, nothing traps.
            channel.embeddedEventLoop.run()
            #expect(try Self.writtenSoFar(channel).isEmpty)
        }
    }
}
