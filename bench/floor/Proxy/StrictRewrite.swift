import BearerCodec
import NIOCore

// The prototype's rewrite: bytes copied through, only what the benchmark's job needs. The product's rewrite is the
// data plane's `Forwarding`, with a route's rules; this one exists only to be measured against it.

/// What the proxy changes in each request: a route prefix it strips, and the lines it adds.
struct RequestRewrite: Sendable {
    /// Stripped from an origin-form target that starts with it followed by "/", "?" or nothing (e.g. `/bench`).
    var stripPrefix: [UInt8]
    /// Field lines written after the client's, CRLF-terminated: `Host: …` and `Authorization: Bearer …`.
    var addedFields: [UInt8]

    init(stripPrefix: String, host: String, authorization: String) {
        self.stripPrefix = Array(stripPrefix.utf8)
        self.addedFields = Array("Host: \(host)\r\nAuthorization: \(authorization)\r\n".utf8)
    }
}

extension RequestHead {
    /// Writes the head the upstream gets: the request line (the prefix stripped from the target, the version
    /// unchanged), the client's fields less hop-by-hop ones, Host and Authorization, then the proxy's.
    func writeForwarded(_ bytes: Span<UInt8>, rewrite: RequestRewrite, into out: inout ByteBuffer) {
        out.writeBytes(bytes.extracting(method.lowerBound..<target.lowerBound).bytes)
        var targetStart = target.lowerBound
        let prefix = rewrite.stripPrefix
        if !prefix.isEmpty, target.count >= prefix.count, bytes[targetStart] == UInt8(ascii: "/"),
            prefix.indices.allSatisfy({ bytes[targetStart + $0] == prefix[$0] })
        {
            let after = targetStart + prefix.count
            if after == target.upperBound || bytes[after] == UInt8(ascii: "/") || bytes[after] == UInt8(ascii: "?") {
                targetStart = after
                if after == target.upperBound || bytes[after] != UInt8(ascii: "/") {
                    out.writeInteger(UInt8(ascii: "/"))
                }
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
    /// Writes the head the client gets: the status line as it came, the fields less hop-by-hop ones, and
    /// `Connection: close` when the proxy will close the client connection after this response.
    func writeForwarded(_ bytes: Span<UInt8>, closing: Bool, into out: inout ByteBuffer) {
        out.writeBytes(bytes.extracting(0..<fieldsStart).bytes)
        let options = connection
        HeadWriter.copyFields(bytes, fieldsStart: fieldsStart, length: length, into: &out) { field in
            HeadWriter.isHopByHop(bytes, field, options: options)
        }
        if closing { out.writeStaticString("Connection: close\r\n") }
        out.writeStaticString("\r\n")
    }
}

extension HeadWriter {
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
