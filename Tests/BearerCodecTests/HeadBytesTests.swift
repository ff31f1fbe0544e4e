import NIOCore
import Testing

@testable import BearerCodec

/// `HeadBytes` writes a head's pieces in one `ByteBuffer` write, within a bound the caller estimates. A bound too
/// small must cost a second pass, never a byte: nothing of a pass that overflowed is kept, and nothing is written
/// outside the room reserved (the copy checks every piece against what is left).
@Suite("BearerCodec: a head written in one piece is every piece, whatever its bound")
struct HeadBytesTests {
    /// Writes every kind of piece: a static string, a `String` (large, so not stored inline), a `Substring`, a
    /// byte, and bytes from a `Span`.
    static func writeAll(_ out: inout HeadBytes, long: String) {
        let source: [UInt8] = Array("span-bytes".utf8)
        out.append("GET ")
        out.append(contentsOf: long)
        out.append(contentsOf: long.dropFirst(3).prefix(5))
        out.append(UInt8(ascii: "!"))
        out.append(source.span.extracting(0..<4))
        out.append("\r\n\r\n")
    }

    static func expected(_ long: String) -> String {
        "GET " + long + long.dropFirst(3).prefix(5) + "!" + "span" + "\r\n\r\n"
    }

    @Test("a bound that fits: one pass, the pieces in order after what the buffer held", arguments: [0, 300])
    func fits(extra: Int) {
        let long = String(repeating: "abcdefghij", count: 20)
        var buffer = ByteBuffer(string: "kept|")
        var passes = 0
        buffer.writeHead(bound: 4 + 200 + 5 + 1 + 4 + 4 + extra) { out in
            passes += 1
            Self.writeAll(&out, long: long)
        }
        #expect(passes == 1)
        #expect(String(buffer: buffer) == "kept|" + Self.expected(long))
    }

    @Test("a bound too small: more passes, and only the last one's bytes", arguments: [0, 1, 64, 100])
    func overflows(bound: Int) {
        let long = String(repeating: "0123456789", count: 20)
        var buffer = ByteBuffer(string: "kept|")
        var passes = 0
        buffer.writeHead(bound: bound) { out in
            passes += 1
            Self.writeAll(&out, long: long)
        }
        #expect(passes > 1)
        #expect(String(buffer: buffer) == "kept|" + Self.expected(long))
    }

    @Test("an overflowed pass writes nothing more, even a piece that would fit after the one that did not")
    func stopsAtOverflow() {
        var buffer = ByteBuffer()
        var seen: [(count: Int, overflowed: Bool)] = []
        buffer.writeHead(bound: 64) { out in
            out.append(contentsOf: String(repeating: "x", count: 60))
            out.append(contentsOf: String(repeating: "y", count: 4096))
            out.append("z")
            seen.append((out.count, out.overflowed))
        }
        #expect(seen.first?.overflowed == true)
        #expect(seen.first?.count == 60)
        #expect(seen.last?.overflowed == false)
        #expect(buffer.readableBytes == 60 + 4096 + 1)
        #expect(buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "z"))
    }
}
