import NIOCore
import NIOEmbedded
import Testing

@testable import BearerCodec
@testable import BearerConfiguration
@testable import BearerDataPlane

/// The loop's pool of idle upstream connections, on its own: a connection is only ever handed out for the origin
/// it was made for, however requests for origins interleave, and the pool's memo of the origin used last never
/// outlives the lists it names.
@Suite("UpstreamPool: idle connections per origin")
struct UpstreamPoolTests {
    static func origin(_ upstream: String) throws -> UpstreamOrigin {
        let route = try TestConfigurations.route(
            #"{ "prefix": "/a", "upstream": "\#(upstream)", "scopes": ["api://a/.default"] }"#)
        return try UpstreamOrigin(route) { _, _ in throw CancellationError() }
    }

    /// A connected handler for `origin` that waits in `pool` between exchanges, on an in-memory channel.
    static func connected(_ origin: UpstreamOrigin, _ pool: UpstreamPool) throws -> (UpstreamHandler, EmbeddedChannel) {
        let handler = UpstreamHandler(origin: origin)
        handler.pool = pool
        let channel = EmbeddedChannel(handler: handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (handler, channel)
    }

    @Test("requests for two origins, interleaved: each gets its own origin's connection, or none")
    func interleaved() throws {
        let pool = UpstreamPool()
        let a = try Self.origin("http://127.0.0.1:8001"), b = try Self.origin("http://127.0.0.1:8002")
        let (toA, channelA) = try Self.connected(a, pool)
        let (toB, channelB) = try Self.connected(b, pool)
        defer {
            _ = try? channelA.finish()
            _ = try? channelB.finish()
        }
        for round in 0..<3 {
            #expect(toA.lease(to: Owner()) && toB.lease(to: Owner()), "round \(round)")
            toA.release(reuse: true, now: .now())
            #expect(pool.take(b) == nil, "round \(round): b got a's connection")
            toB.release(reuse: true, now: .now())
            #expect(pool.take(a) === toA, "round \(round)")
            #expect(pool.take(a) == nil, "round \(round): a's one connection was handed out twice")
            #expect(pool.take(b) === toB, "round \(round)")
        }
    }

    @Test("after closeAll, a connection parked for the origin used last is kept, handed out and closed by the next")
    func closeAllForgetsTheMemo() throws {
        let pool = UpstreamPool()
        let a = try Self.origin("http://127.0.0.1:8001")
        let (first, firstChannel) = try Self.connected(a, pool)
        let (second, secondChannel) = try Self.connected(a, pool)
        defer {
            _ = try? firstChannel.finish()
            _ = try? secondChannel.finish()
        }
        #expect(first.lease(to: Owner()))
        first.release(reuse: true, now: .now())
        #expect(pool.take(a) === first)
        pool.closeAll()
        #expect(second.lease(to: Owner()))
        second.release(reuse: true, now: .now())
        #expect(pool.take(a) === second, "parked into a list the pool no longer holds")
        #expect(second.lease(to: Owner()))
        second.release(reuse: true, now: .now())
        pool.closeAll()
        #expect(second.machine.state == .closed, "closeAll did not reach the connection parked after it")
        #expect(pool.take(a) == nil)
    }

    final class Owner: UpstreamConnectionOwner {
        func upstream(_ upstream: any UpstreamConnection, received part: UpstreamResponsePart) {}
        func upstreamReadComplete(_ upstream: any UpstreamConnection) {}
        func upstreamWritabilityChanged(_ upstream: any UpstreamConnection) {}
        func upstreamClosed(_ upstream: any UpstreamConnection, error: (any Error)?, neverProcessed: Bool) {}
    }
}
