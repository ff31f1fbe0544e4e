import NIOCore
import NIOEmbedded
import Testing

@testable import BearerDataPlane

/// Nothing refers to a client connection's handler weakly (#24 session 17: a weak reference gave it a side table, and
/// every retain and release of it the runtime's slow path). Its upstream connection, its timer and its connect
/// callback hold it strongly instead — so each must let go when the exchange or the connection ends, or every client
/// that leaves would leave its handler behind.
@Suite("A client connection's handler is freed when the client leaves, whatever its upstream was doing")
struct HandlerLifetimeTests {
    /// Sends one request through a client pipeline whose upstream is in memory, runs `exchange` with the upstream
    /// connection, closes the client, and tells whether the handler is still alive once the channel is gone.
    static func handlerOutlivesClient(
        _ exchange: (EmbeddedChannel, UpstreamSeamTests.MemoryConnection) throws -> Void
    ) async throws -> Bool {
        weak var handler: ProxyConnectionHandler?
        try await ProxyHarness.with(routes: UpstreamSeamTests.routes) { proxy in
            let connector = UpstreamSeamTests.MemoryConnector()
            let channel = try UpstreamSeamTests.connection(proxy, connector: connector)
            handler = try channel.pipeline.syncOperations.handler(type: ProxyConnectionHandler.self)
            try UpstreamSeamTests.deliver(UpstreamSeamTests.request, to: channel)
            let connection = try #require(connector.made.first)
            #expect(connection.owner != nil, "leased to the exchange")
            try exchange(channel, connection)
            _ = try? channel.finish()
            #expect(connection.owner == nil, "the upstream connection holds nothing of the handler")
        }
        return handler != nil
    }

    @Test("a client that leaves mid-response: its upstream connection lets go of the handler, and the handler is freed")
    func leftMidResponse() async throws {
        let alive = try await Self.handlerOutlivesClient { _, _ in }
        #expect(!alive, "freed: no upstream connection, timer or callback keeps it")
    }

    @Test("a completed exchange: the connection goes back for reuse holding nothing of the handler, which is freed")
    func completedExchange() async throws {
        let alive = try await Self.handlerOutlivesClient { channel, connection in
            connection.answer(.ok, body: "hello")
            let written = try UpstreamSeamTests.written(channel)
            #expect(written.hasSuffix("hello"))
            #expect(connection.releases == [true])
        }
        #expect(!alive)
    }
}
