/// One field line's name and value, as offsets into the head.
package struct FieldLine: Sendable, Equatable {
    package var name: Range<Int>
    package var value: Range<Int>
}

/// The field lines of a head that ``RequestHead/parse(_:limits:)`` or ``ResponseHead/parse(_:requestWasHead:limits:)``
/// accepted, in order: each line's range (CRLF included), name and value (without surrounding whitespace). It
/// relies on the validation already done, so it only looks for the colon and the line end — but every scan also
/// stops at the end of the section (and the span's own bounds check stops any index past its bytes): given bytes
/// that are not the head it was made for, it returns garbage ranges or nil, never reads outside them (SPEC §3: the
/// codec is memory-safe in release builds; a scan that ran until it met a colon or CR would not be).
package struct FieldLines {
    package struct Line {
        package var line: Range<Int>
        package var field: FieldLine
    }

    private var index: Int
    private let end: Int

    /// The lines between `fieldsStart` and the empty line that ends a head of `length` bytes.
    package init(fieldsStart: Int, length: Int) {
        self.index = fieldsStart
        self.end = length - 2
    }

    /// The next line of the head whose bytes are `bytes`, or nil after the last.
    package mutating func next(in bytes: Span<UInt8>) -> Line? {
        let end = min(self.end, bytes.count)
        guard index < end else { return nil }
        let start = index
        while index < end, bytes[index] != ASCII.colon { index += 1 }
        let name = start..<index
        index = min(index + 1, end)
        while index < end, bytes[index] == ASCII.space || bytes[index] == ASCII.tab { index += 1 }
        let valueStart = index
        while index < end, bytes[index] != ASCII.cr { index += 1 }
        var valueEnd = index
        while valueEnd > valueStart, bytes[valueEnd - 1] == ASCII.space || bytes[valueEnd - 1] == ASCII.tab {
            valueEnd -= 1
        }
        index = min(index + 2, end)
        return Line(line: start..<index, field: FieldLine(name: name, value: valueStart..<valueEnd))
    }
}
