import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// The client's response writer on its own (#24 condition 5): heads go out as written, bodies as they are or as
/// chunks (RFC 9112 §7.1), and an end's promise completes only after what came before it.
@Suite("MessageEncoder: heads as bytes, bodies as they are or chunked")
struct MessageEncoderTests {
    /// Writes `parts` through an encoder; the bytes that reach the socket.
    static func written(_ parts: [MessagePart]) throws -> String {
        let channel = EmbeddedChannel(handler: MessageEncoder<MessagePart>())
        for part in parts { try channel.writeOutbound(part) }
        var out = ""
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { out += String(buffer: bytes) }
        _ = try channel.finish()
        return out
    }

    static let head = ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n")

    @Test("a chunked body: a size line in hex per part, no chunk for an empty part, the last chunk with trailers")
    func chunked() throws {
        let parts: [MessagePart] = [
            .head(Self.head, chunked: true), .body(ByteBuffer(string: "hello")), .body(ByteBuffer()),
            .body(ByteBuffer(repeating: UInt8(ascii: "x"), count: 300)),
            .end(trailers: ByteBuffer(string: "X-Sum: 9\r\n")),
        ]
        #expect(
            try Self.written(parts)
                == "HTTP/1.1 200 OK\r\n\r\n5\r\nhello\r\n12c\r\n" + String(repeating: "x", count: 300)
                + "\r\n0\r\nX-Sum: 9\r\n\r\n")
        #expect(
            try Self.written([.head(Self.head, chunked: true), .end(trailers: nil)])
                == "HTTP/1.1 200 OK\r\n\r\n0\r\n\r\n")
    }

    @Test("a body framed by Content-Length or the close goes as it is; trailers have nowhere to go")
    func asItIs() throws {
        let parts: [MessagePart] = [
            .head(Self.head, chunked: false), .body(ByteBuffer(string: "ab")), .body(ByteBuffer(string: "c")),
            .end(trailers: ByteBuffer(string: "X-Sum: 9\r\n")),
        ]
        #expect(try Self.written(parts) == "HTTP/1.1 200 OK\r\n\r\nabc")
    }

    @Test("the next response after a chunked one is framed by its own head")
    func nextResponse() throws {
        let parts: [MessagePart] = [
            .head(Self.head, chunked: true), .body(ByteBuffer(string: "a")), .end(trailers: nil),
            .head(Self.head, chunked: false), .body(ByteBuffer(string: "b")), .end(trailers: nil),
        ]
        #expect(try Self.written(parts) == "HTTP/1.1 200 OK\r\n\r\n1\r\na\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\nb")
    }

    @Test("an end's promise completes once the bytes before it are written, never before")
    func endPromise() throws {
        let channel = EmbeddedChannel(handler: MessageEncoder<MessagePart>())
        channel.write(MessagePart.head(Self.head, chunked: false), promise: nil)
        let ended = channel.eventLoop.makePromise(of: Void.self)
        channel.write(MessagePart.end(trailers: nil), promise: ended)
        let done = NIOLockedValueBox(false)
        ended.futureResult.whenSuccess { done.withLockedValue { $0 = true } }
        #expect(!done.withLockedValue { $0 })
        channel.flush()
        #expect(done.withLockedValue { $0 })
        _ = try channel.finish()
    }

    @Test("a part with nothing to send is no write at all, unless a promise waits for it")
    func emptyParts() throws {
        let channel = EmbeddedChannel(handler: MessageEncoder<MessagePart>())
        channel.write(MessagePart.head(Self.head, chunked: false), promise: nil)
        channel.write(MessagePart.body(ByteBuffer()), promise: nil)
        channel.write(MessagePart.end(trailers: nil), promise: nil)
        channel.flush()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == Self.head)
        // Each write costs a pass through the pipeline to the socket's queue (#24 session 18): none for no bytes.
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "an empty body and an end with no framing")
        let ended = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(MessagePart.end(trailers: nil), promise: ended)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(), "written empty, to carry the promise")
        try ended.futureResult.wait()
        _ = try channel.finish()
    }

    @Test("the proxy's own heads: a field that is not a token or whose value would split the head is left out")
    func ownHeads() {
        var head = HTTPResponseHead(version: .http1_0, status: .notFound)
        head.headers.add(name: "x-ok", value: "1")
        head.headers.add(name: "x bad", value: "2")
        head.headers.add(name: "x-split", value: "a\r\nx-injected: 1")
        head.headers.add(name: "x-nul", value: "a\u{0}b")
        #expect(String(buffer: ResponseHeadBytes.bytes(head)) == "HTTP/1.0 404 Not Found\r\nx-ok: 1\r\n\r\n")
    }
}
