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

    /// Whether a field must not cross the proxy: hop-by-hop (RFC 9110 §7.6.1), named by Connection, or — for a
    /// message whose chunks pass through as they are — anything but the Transfer-Encoding line that says so.
    static func isHopByHop(_ bytes: Span<UInt8>, _ field: FieldLine, options: ConnectionOptions) -> Bool {
        // Transfer-Encoding is hop-by-hop, but the chunks go on unchanged, so the line that frames them does too
        // (the parser accepted it only as exactly `chunked`).
        if FieldName.equals(bytes, field.name, "transfer-encoding") { return false }
        if FieldName.isHopByHop(bytes, field.name) { return true }
        for option in options.named where FieldName.equals(bytes, field.name, option) { return true }
        return false
    }
}

/// What the proxy changes in each request: a route prefix it strips, and the lines it adds.
package struct RequestRewrite: Sendable {
    /// Stripped from an origin-form target that starts with it followed by "/", "?" or nothing (e.g. `/bench`).
    package var stripPrefix: [UInt8]
    /// Field lines written after the client's, CRLF-terminated: `Host: …` and `Authorization: Bearer …`.
    package var addedFields: [UInt8]

    package init(stripPrefix: String, host: String, authorization: String) {
        self.stripPrefix = Array(stripPrefix.utf8)
        self.addedFields = Array("Host: \(host)\r\nAuthorization: \(authorization)\r\n".utf8)
    }
}

extension RequestHead {
    /// Writes the head the upstream gets: the request line (the prefix stripped from the target, the version
    /// unchanged), the client's fields less hop-by-hop ones, Host and Authorization, then the proxy's.
    package func writeForwarded(_ bytes: Span<UInt8>, rewrite: RequestRewrite, into out: inout ByteBuffer) {
        out.writeBytes(bytes.extracting(method.lowerBound..<target.lowerBound).bytes)
        var targetStart = target.lowerBound
        let prefix = rewrite.stripPrefix
        if !prefix.isEmpty, target.count >= prefix.count, bytes[targetStart] == ASCII.slash,
            prefix.indices.allSatisfy({ bytes[targetStart + $0] == prefix[$0] })
        {
            let after = targetStart + prefix.count
            if after == target.upperBound || bytes[after] == ASCII.slash || bytes[after] == UInt8(ascii: "?") {
                targetStart = after
                if after == target.upperBound || bytes[after] != ASCII.slash { out.writeInteger(ASCII.slash) }
            }
        }
        out.writeBytes(bytes.extracting(targetStart..<fieldsStart).bytes)
        let options = connection
        HeadWriter.copyFields(bytes, fieldsStart: fieldsStart, length: length, into: &out) { field in
            switch field.name.count {
            case 4 where FieldName.equals(bytes, field.name, "host"): true
            case 13 where FieldName.equals(bytes, field.name, "authorization"): true
            default: HeadWriter.isHopByHop(bytes, field, options: options)
            }
        }
        out.writeBytes(rewrite.addedFields)
        out.writeStaticString("\r\n")
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

    /// Writes the head the client gets: the status line as it came, the fields less hop-by-hop ones, and
    /// `Connection: close` when the proxy will close the client connection after this response.
    package func writeForwarded(_ bytes: Span<UInt8>, closing: Bool, into out: inout ByteBuffer) {
        out.writeBytes(bytes.extracting(0..<fieldsStart).bytes)
        let options = connection
        HeadWriter.copyFields(bytes, fieldsStart: fieldsStart, length: length, into: &out) { field in
            HeadWriter.isHopByHop(bytes, field, options: options)
        }
        if closing { out.writeStaticString("Connection: close\r\n") }
        out.writeStaticString("\r\n")
    }
}
