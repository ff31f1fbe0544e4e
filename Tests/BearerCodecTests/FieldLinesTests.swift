import Testing

@testable import BearerCodec

/// #24 condition 1: every scan stops at the end of its input. `FieldLines` trusts a head the parser accepted, but
/// given any other bytes — a shorter buffer, offsets past the end, a section with no colon or no CR — it returns
/// lines or nil and never reads past them (an out-of-bounds `Span` index would trap this test).
@Suite("BearerCodec: field lines stay inside their bytes")
struct FieldLinesTests {
    static func lines(_ text: String, from start: Int, length: Int) -> [String] {
        let bytes = Array(text.utf8)
        var lines = FieldLines(fieldsStart: start, length: length)
        var found: [String] = []
        while let line = lines.next(in: bytes.span) {
            let name = String(decoding: bytes[line.field.name], as: UTF8.self)
            let value = String(decoding: bytes[line.field.value], as: UTF8.self)
            found.append("\(name)=\(value)")
        }
        return found
    }

    @Test("an accepted head: each line's name and value, whitespace around the value left out")
    func acceptedHead() throws {
        let text = "GET / HTTP/1.1\r\nHost: a\r\nX-Two:  b c \t\r\nEmpty:\r\n\r\n"
        let head = try #require(try Array(text.utf8).parseRequest().get())
        #expect(
            Self.lines(text, from: head.fieldsStart, length: head.length) == ["Host=a", "X-Two=b c", "Empty="])
    }

    @Test(
        "bytes that are not the head the offsets came from: no read past their end",
        arguments: [
            ("Host: a", 0, 200, ["Host=a"]),  // no CR, the length far past the bytes
            ("no colon at all", 0, 17, ["no colon at all="]),  // no colon
            ("X: a\r", 0, 7, ["X=a"]),  // CR at the very end
            ("X:", 0, 4, ["X="]),  // colon at the very end
            ("X:   ", 0, 7, ["X="]),  // only whitespace after the colon, to the end
            ("", 0, 10, []),  // nothing
            ("Host: a\r\n\r\n", 20, 40, []),  // the start past the end
        ])
    func bounded(_ text: String, _ start: Int, _ length: Int, _ expected: [String]) {
        #expect(Self.lines(text, from: start, length: length) == expected)
    }
}
