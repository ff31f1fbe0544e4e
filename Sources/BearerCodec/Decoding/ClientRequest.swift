import NIOCore
import NIOHTTP1

/// A client's request head as the codec read it: the head's own bytes with the codec's offsets — the checks read its
/// fields where they lie, and the upstream's head is written from them in one pass (``Forwarding``) — and its request
/// line (``RequestLine``), for what the exchange records (method, target, version). Field values become strings only
/// when a check reads them.
package struct ClientRequest: Sendable, Equatable {
    /// The request line: method, target and version. The fields are ``bytes``'.
    package let line: RequestLine
    /// The head, its empty line included: a slice of the bytes read, not a copy.
    package let bytes: ByteBuffer
    /// Offsets into ``bytes``' readable bytes.
    package let parsed: RequestHead

    package init(line: RequestLine, bytes: ByteBuffer, parsed: RequestHead) {
        self.line = line
        self.bytes = bytes
        self.parsed = parsed
    }

    /// Whether the client may send another request on this connection (RFC 9112 §9.3): an HTTP/1.1 request unless
    /// it lists `close`; an HTTP/1.0 one if it lists `keep-alive` (a token, in any case) and not `close`, and is not
    /// in absolute-form. In origin-form the proxy is the client's server (a gateway, RFC 9110 §3.7): the bytes after
    /// the request are the same client's, and each request is framed on its own, as in HTTP/1.1. A client sends
    /// absolute-form to a proxy it chose (RFC 9112 §3.2.2), and §9.3 honours HTTP/1.0's keep-alive only where the
    /// recipient is not a proxy. Whether the answer lets the connection stay is the exchange's to decide: an
    /// HTTP/1.0 client reads no chunks, so an answer without a length still ends with the connection.
    package var keepAlive: Bool {
        guard parsed.keepAlive else { return false }
        if parsed.minorVersion == 1 { return true }
        // origin-form starts with `/`, asterisk-form is `*`; absolute-form starts with its scheme (RFC 9112 §3.2).
        let first = bytes.getInteger(at: bytes.readerIndex + parsed.target.lowerBound, as: UInt8.self)
        return first == UInt8(ascii: "/") || first == UInt8(ascii: "*")
    }

    /// The value of the field `bytes[range]` (a name or a value the codec validated).
    package func string(_ range: Range<Int>) -> String {
        bytes.getString(at: bytes.readerIndex + range.lowerBound, length: range.count) ?? ""
    }

    /// The values of the fields named `name` (lowercase), in order: a string each, for the few names a check reads.
    package func values(_ name: String) -> [String] {
        var values: [String] = []
        let span = bytes.readableBytesUInt8Span
        var lines = FieldLines(fieldsStart: parsed.fieldsStart, length: parsed.length)
        while let line = lines.next(in: span) {
            if FieldName.equals(span, line.field.name, lowercased: name) { values.append(string(line.field.value)) }
        }
        return values
    }

    /// The value of the first field named `name` (lowercase), if any.
    package func first(_ name: StaticString) -> String? {
        let span = bytes.readableBytesUInt8Span
        var lines = FieldLines(fieldsStart: parsed.fieldsStart, length: parsed.length)
        while let line = lines.next(in: span) {
            if FieldName.equals(span, line.field.name, name) { return string(line.field.value) }
        }
        return nil
    }

    /// The field lines as NIOHTTP1's head, for the paths off the hot one that read every field (the proxy's own
    /// endpoints).
    package var headWithFields: HTTPRequestHead {
        line.head(
            headers: HTTPHeaders(
                HeadFields.strings(
                    in: bytes, fieldsStart: parsed.fieldsStart, length: parsed.length,
                    minorVersion: parsed.minorVersion, connection: parsed.connection)))
    }
}

/// What ``RequestDecoder`` delivers for each client request. Trailers are not delivered: the proxy drops them
/// (SPEC §8).
package enum ClientRequestPart: Sendable, Equatable {
    /// Not indirect: parts do not cross the pipeline in a `NIOAny` (which boxes anything over three words); they are
    /// returned by value to the handler that runs the decoder, and a box would cost an allocation per message
    /// (bench/counts.sh).
    case head(ClientRequest)
    case body(ByteBuffer)
    case end

    package var isHead: Bool {
        if case .head = self { return true }
        return false
    }

    package var isEnd: Bool {
        if case .end = self { return true }
        return false
    }
}
