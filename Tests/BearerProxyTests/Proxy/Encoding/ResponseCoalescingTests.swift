import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// A response head and the small body that follows it in the same read of the upstream's go to the client as one
/// write (#24 session 18, ``ProxyConnectionHandler``) — never out of order, never waiting for
/// bytes that have not come, and a large body is never copied.
@Suite("Response writes: a head and its small body as one write")
struct ResponseCoalescingTests {
    typealias Seam = UpstreamSeamTests

    /// Each buffer the client's channel was handed, in order.
    static func writes(_ channel: EmbeddedChannel) throws -> [ByteBuffer] {
        channel.embeddedEventLoop.run()
        var buffers: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        return buffers
    }

    /// A client connection with a request sent to its transport, and that transport.
    static func exchange(_ proxy: ProxyHarness) throws -> (EmbeddedChannel, Seam.MemoryConnection) {
        let connector = Seam.MemoryConnector()
        let channel = try Seam.connection(proxy, connector: connector)
        try Seam.deliver(Seam.request, to: channel)
        return (channel, try #require(connector.made.first))
    }

    static func head(length: Int) -> UpstreamResponsePart {
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "content-length", value: String(length))
        return .head(UpstreamResponse(head))
    }

    @Test("a head and a small body in one read: one write, the head then the body")
    func oneWrite() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let (channel, upstream) = try Self.exchange(proxy)
            upstream.answer(.ok, body: #"{"ok":true}"#)
            let writes = try Self.writes(channel)
            try #require(writes.count == 1, "\(writes.map { String(buffer: $0) })")
            let text = String(buffer: writes[0])
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.hasSuffix("\r\n\r\n{\"ok\":true}"))
            #expect(text.contains("content-length: 11\r\n"))
            _ = try? channel.finish()
        }
    }

    @Test("a body part that does not fit is written as it is, after the head and the small parts before it, in order")
    func largeBodyNotCopied() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let (channel, upstream) = try Self.exchange(proxy)
            let owner = try #require(upstream.owner)
            let large = ByteBuffer(repeating: UInt8(ascii: "L"), count: ClientWriter.coalescedLimit)
            owner.upstream(upstream, received: Self.head(length: 2 + large.readableBytes + 1))
            owner.upstream(upstream, received: .body(ByteBuffer(string: "ab")))
            owner.upstream(upstream, received: .body(large))
            owner.upstream(upstream, received: .body(ByteBuffer(string: "c")))
            owner.upstream(upstream, received: .end(trailers: nil))
            owner.upstreamReadComplete(upstream)
            let writes = try Self.writes(channel)
            try #require(writes.count == 3, "the head with ab, the large part, then c on its own")
            #expect(String(buffer: writes[0]).hasSuffix("\r\n\r\nab"))
            #expect(writes[1] == large)
            #expect(
                writes[1].withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
                    == large.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) },
                "the large part's own storage, not a copy")
            #expect(String(buffer: writes[2]) == "c")
            _ = try? channel.finish()
        }
    }

    @Test("the next response's head, written into the same kept buffer, leaves the one still held by the socket intact")
    func nextHeadLeavesPendingBytes() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let connector = Seam.MemoryConnector()
            let channel = try Seam.connection(proxy, connector: connector)
            try Seam.deliver(Seam.request, to: channel)
            try #require(connector.made.count == 1)
            connector.made[0].answer(.ok, body: "first")
            let first = try Self.writes(channel)
            try Seam.deliver(Seam.request, to: channel)
            try #require(connector.made.count == 2)
            connector.made[1].answer(.notFound, body: "second")
            let second = try Self.writes(channel)
            try #require(first.count == 1 && second.count == 1)
            #expect(String(buffer: first[0]).hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(String(buffer: first[0]).hasSuffix("\r\n\r\nfirst"))
            #expect(String(buffer: second[0]).hasPrefix("HTTP/1.1 404 Not Found\r\n"))
            #expect(String(buffer: second[0]).hasSuffix("\r\n\r\nsecond"))
            _ = try? channel.finish()
        }
    }

    @Test("a head whose body has not come is written and flushed when the upstream's read ends")
    func headNotHeldPastTheRead() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let (channel, upstream) = try Self.exchange(proxy)
            let owner = try #require(upstream.owner)
            owner.upstream(upstream, received: Self.head(length: 5))
            #expect(try Self.writes(channel).isEmpty, "held while the read may bring its body")
            owner.upstreamReadComplete(upstream)
            let head = try Self.writes(channel)
            try #require(head.count == 1)
            #expect(String(buffer: head[0]).hasPrefix("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n"))
            #expect(String(buffer: head[0]).hasSuffix("\r\n\r\n"), "the head alone")
            owner.upstream(upstream, received: .body(ByteBuffer(string: "hello")))
            owner.upstream(upstream, received: .end(trailers: nil))
            owner.upstreamReadComplete(upstream)
            #expect(try Self.writes(channel).map { String(buffer: $0) } == ["hello"])
            _ = try? channel.finish()
        }
    }

    @Test("many small parts in one read: what is held never exceeds the limit, and every byte arrives once, in order")
    func manySmallParts() async throws {
        try await ProxyHarness.with(routes: Seam.routes) { proxy in
            let (channel, upstream) = try Self.exchange(proxy)
            let owner = try #require(upstream.owner)
            let parts = (0..<200).map { index in
                ByteBuffer(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 100)
            }
            owner.upstream(upstream, received: Self.head(length: parts.count * 100))
            for part in parts { owner.upstream(upstream, received: .body(part)) }
            owner.upstream(upstream, received: .end(trailers: nil))
            owner.upstreamReadComplete(upstream)
            let writes = try Self.writes(channel)
            #expect(writes.allSatisfy { $0.readableBytes <= ClientWriter.coalescedLimit })
            #expect(writes.count > 1 && writes.count < parts.count, "the head with as many parts as fit, then the rest")
            let text = writes.map { String(buffer: $0) }.joined()
            let body = text[text.range(of: "\r\n\r\n")!.upperBound...]
            #expect(body == parts.map { String(buffer: $0) }.joined()[...])
            _ = try? channel.finish()
        }
    }
}
