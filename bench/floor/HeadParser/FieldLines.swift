/// The field lines of a head that ``RequestHead/parse(_:limits:)`` or ``ResponseHead/parse(_:requestWasHead:limits:)``
/// accepted, in order: each line's range (CRLF included), name and value (without surrounding whitespace). It
/// relies on the validation already done, so it only looks for the colon and the line end.
public struct FieldLines: Sequence, IteratorProtocol {
    public struct Line {
        public var line: Range<Int>
        public var field: FieldLine
    }

    private let bytes: UnsafeRawBufferPointer
    private var index: Int
    private let end: Int

    /// The lines between `fieldsStart` and the empty line that ends a head of `length` bytes.
    public init(_ bytes: UnsafeRawBufferPointer, fieldsStart: Int, length: Int) {
        self.bytes = bytes
        self.index = fieldsStart
        self.end = length - 2
    }

    public mutating func next() -> Line? {
        guard index < end else { return nil }
        let start = index
        while bytes[index] != ASCII.colon { index += 1 }
        let name = start..<index
        index += 1
        while bytes[index] == ASCII.space || bytes[index] == ASCII.tab { index += 1 }
        let valueStart = index
        while bytes[index] != ASCII.cr { index += 1 }
        var valueEnd = index
        while valueEnd > valueStart, bytes[valueEnd - 1] == ASCII.space || bytes[valueEnd - 1] == ASCII.tab {
            valueEnd -= 1
        }
        index += 2
        return Line(line: start..<index, field: FieldLine(name: name, value: valueStart..<valueEnd))
    }
}
