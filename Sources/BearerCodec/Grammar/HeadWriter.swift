import NIOCore

/// Writes a validated head on to the next hop without building `HTTPHeaders`: the start line and the kept field
/// lines are copied as they came, in runs; only the proxy's own lines are added.
package enum HeadWriter {
    /// Copies the field lines of `bytes[fieldsStart..<length]` that `drop` does not reject, coalescing runs of
    /// kept lines into one copy each.
    package static func copyFields(
        _ bytes: Span<UInt8>, fieldsStart: Int, length: Int, into out: inout ByteBuffer,
        drop: (FieldLine) -> Bool
    ) {
        forEachKeptRun(bytes, fieldsStart: fieldsStart, length: length, drop: drop) { run in
            out.writeBytes(bytes.extracting(run).bytes)
        }
    }

    /// ``copyFields(_:fieldsStart:length:into:drop:)`` for a head written in one piece (``HeadBytes``).
    package static func copyFields(
        _ bytes: Span<UInt8>, fieldsStart: Int, length: Int, into out: inout HeadBytes,
        drop: (FieldLine) -> Bool
    ) {
        forEachKeptRun(bytes, fieldsStart: fieldsStart, length: length, drop: drop) { run in
            out.append(bytes.extracting(run))
        }
    }

    /// Calls `copy` with each run of consecutive field lines that `drop` keeps, in order.
    private static func forEachKeptRun(
        _ bytes: Span<UInt8>, fieldsStart: Int, length: Int, drop: (FieldLine) -> Bool, copy: (Range<Int>) -> Void
    ) {
        var runStart = fieldsStart
        var runEnd = fieldsStart
        var lines = FieldLines(fieldsStart: fieldsStart, length: length)
        while let line = lines.next(in: bytes) {
            if drop(line.field) {
                if runEnd > runStart { copy(runStart..<runEnd) }
                runStart = line.line.upperBound
            }
            runEnd = line.line.upperBound
        }
        if runEnd > runStart { copy(runStart..<runEnd) }
    }
}

extension ResponseHead {
    /// Writes the status line with the client's version (the proxy is its client's server, RFC 9110 §6.2) and the
    /// code and reason as they came. The space before an empty reason that RFC 9112 §4 asks for, and that the
    /// codec lets an upstream leave out, is put back.
    package func writeStatusLine(_ bytes: Span<UInt8>, minorVersion: Int, into out: inout ByteBuffer) {
        out.writeStaticString(minorVersion == 0 ? "HTTP/1.0" : "HTTP/1.1")
        // `HTTP/1.x` is 8 bytes, then a space and three digits (the parser checked every byte).
        out.writeBytes(bytes.extracting(8..<12).bytes)
        if bytes[12] == ASCII.cr { out.writeInteger(ASCII.space) }
        out.writeBytes(bytes.extracting(12..<fieldsStart).bytes)
    }

    /// ``writeStatusLine(_:minorVersion:into:)`` for a head written in one piece (``HeadBytes``).
    package func writeStatusLine(_ bytes: Span<UInt8>, minorVersion: Int, into out: inout HeadBytes) {
        let version: StaticString = minorVersion == 0 ? "HTTP/1.0" : "HTTP/1.1"
        out.append(version)
        out.append(bytes.extracting(8..<12))
        if bytes[12] == ASCII.cr { out.append(ASCII.space) }
        out.append(bytes.extracting(12..<fieldsStart))
    }
}
