import NIOCore
import Testing

@testable import BearerCodec
@testable import BearerDataPlane

/// The buffer a connection writes its heads into, reused between messages (#24 session 17): reuse must never reach
/// bytes a pending write still holds, and must actually happen once none does.
@Suite("ReusedHeadBuffer: one allocation per connection, never one pending write overwritten")
struct ReusedHeadBufferTests {
    /// Writes `text` as a head the way the proxy does: emptied first, with room for it.
    static func write(_ text: String, into reused: inout ReusedHeadBuffer) -> ByteBuffer {
        reused.writing { out in
            out.clear(minimumCapacity: text.utf8.count)
            out.writeString(text)
            return out
        }
    }

    static func address(_ buffer: ByteBuffer) -> UInt? {
        buffer.withUnsafeReadableBytes { $0.baseAddress.map { UInt(bitPattern: $0) } }
    }

    @Test(
        "a head written while the last one is still held (its write pending) goes to new storage: the held bytes stay")
    func pendingWriteKept() {
        var reused = ReusedHeadBuffer()
        let pending = Self.write("HTTP/1.1 200 OK\r\n\r\n", into: &reused)
        let next = Self.write("HTTP/1.1 404 Not Found\r\n\r\n", into: &reused)
        #expect(String(buffer: pending) == "HTTP/1.1 200 OK\r\n\r\n")
        #expect(String(buffer: next) == "HTTP/1.1 404 Not Found\r\n\r\n")
        #expect(Self.address(pending) != Self.address(next))
    }

    @Test("once nothing else holds it, the next head is written into the same storage")
    func reusedOnceReleased() {
        var reused = ReusedHeadBuffer()
        var first: ByteBuffer? = Self.write("GET /a HTTP/1.1\r\nhost: x\r\n\r\n", into: &reused)
        let firstAddress = first.flatMap(Self.address)
        first = nil  // the socket took the bytes
        let second = Self.write("GET /b HTTP/1.1\r\nhost: y\r\n\r\n", into: &reused)
        #expect(String(buffer: second) == "GET /b HTTP/1.1\r\nhost: y\r\n\r\n")
        #expect(firstAddress != nil && Self.address(second) == firstAddress)
    }

    @Test("a head larger than the kept limit is written, and not kept for the connection's idle time")
    func largeNotKept() {
        var reused = ReusedHeadBuffer()
        let big = String(repeating: "x", count: ReusedHeadBuffer.largestKept + 1)
        var first: ByteBuffer? = Self.write(big, into: &reused)
        #expect(first?.readableBytes == big.utf8.count)
        first = nil
        // Kept, its storage would come back with its capacity; not kept, the next head gets a buffer of its own size.
        let second = Self.write("small", into: &reused)
        #expect(String(buffer: second) == "small")
        #expect(second.capacity <= ReusedHeadBuffer.largestKept)
    }
}
