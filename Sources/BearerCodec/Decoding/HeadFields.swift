import NIOCore

/// A parsed head's field lines as the `(name, value)` strings NIOHTTP1's parts carry, for the machines above the
/// decoders that do not yet read the byte ranges themselves.
enum HeadFields {
    /// The field lines between `fieldsStart` and `length` of the head at `buffer`'s reader index, in order, values
    /// without surrounding whitespace. An HTTP/1.1 `Connection` that says only `keep-alive` is left out: it says
    /// nothing the version does not (RFC 9112 §9.3) and names no field, it is hop-by-hop and never forwarded — and
    /// left in, NIO's `isKeepAlive` would work the keep-alive state out of it on every call (an array of its values
    /// each time; NIO's own decoder hands that state over through an initializer we cannot use).
    static func strings(
        in buffer: ByteBuffer, fieldsStart: Int, length: Int, minorVersion: UInt8, connection: ConnectionOptions
    ) -> [(String, String)] {
        let start = buffer.readerIndex
        func string(_ range: Range<Int>) -> String {
            buffer.getString(at: start + range.lowerBound, length: range.count) ?? ""
        }
        var fields: [(String, String)] = []
        fields.reserveCapacity(16)
        var lines = FieldLines(fieldsStart: fieldsStart, length: length)
        let bytes = buffer.readableBytesUInt8Span
        let redundantConnection = minorVersion == 1 && connection.onlyKeepAlive
        while let line = lines.next(in: bytes) {
            if redundantConnection, FieldName.equals(bytes, line.field.name, "connection") { continue }
            fields.append((string(line.field.name), string(line.field.value)))
        }
        return fields
    }
}
