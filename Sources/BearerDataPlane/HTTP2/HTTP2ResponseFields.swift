import BearerCodec
import BearerHTTP
import NIOCore
import NIOHPACK

/// The client connection's HTTP/1.1 response head and trailer section as HTTP/2 header sections (RFC 9113 §8.3.2):
/// `:status` first, names in lowercase, and without the fields that belong to one HTTP/1.1 connection (RFC 9113
/// §8.2.2) — `Connection` and every field it names, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`.
/// The bytes come from the proxy's own encoder and were read by the strict decoder (``ResponseDecoder``) already.
enum HTTP2ResponseFields {
    /// The header section of `response`.
    static func head(_ response: UpstreamResponse) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(16)
        headers.add(name: ":status", value: String(response.head.status))
        append(
            fieldsOf: response.bytes, fieldsStart: response.head.fieldsStart, length: response.head.length,
            to: &headers)
        return headers
    }

    /// The trailer section `trailers` (field lines, each ending in CRLF).
    static func trailers(_ trailers: ByteBuffer) -> HPACKHeaders {
        var headers = HPACKHeaders()
        append(fieldsOf: trailers, fieldsStart: 0, length: trailers.readableBytes + 2, to: &headers)
        return headers
    }

    private static func append(
        fieldsOf bytes: ByteBuffer, fieldsStart: Int, length: Int, to headers: inout HPACKHeaders
    ) {
        let span = bytes.readableBytesUInt8Span
        let start = bytes.readerIndex
        func string(_ range: Range<Int>) -> String? {
            bytes.getString(at: start + range.lowerBound, length: range.count)
        }
        // The options a `Connection` field names, found first: its fields are dropped wherever they stand. Most
        // heads have none, and the set then costs nothing.
        var named: Set<String> = []
        var lines = FieldLines(fieldsStart: fieldsStart, length: length)
        while let line = lines.next(in: span) {
            guard FieldName.equals(span, line.field.name, "connection"), let value = string(line.field.value) else {
                continue
            }
            HopByHop.forEachOption(in: value) { named.insert(String(Substring($0)).lowercased()) }
        }
        lines = FieldLines(fieldsStart: fieldsStart, length: length)
        while let line = lines.next(in: span) {
            guard let name = string(line.field.name)?.lowercased(), let value = string(line.field.value),
                !HTTP2RequestHead.connectionSpecific.contains(name), !named.contains(name)
            else { continue }
            headers.add(name: name, value: value, indexing: Self.indexing(name))
        }
    }

    /// Whether the HPACK encoder may put a field in the connection's dynamic table (RFC 7541 §6.2). `x-request-id`
    /// is new in every response: indexed, each one would evict an entry the next response could have used (the table
    /// is 4 KiB, about fifty such entries), and the encoder searches the whole table for every field it writes. It
    /// goes as a literal without indexing (RFC 7541 §6.2.2), its name spelled out: a dozen bytes a response, where
    /// the fields it would have evicted are worth more.
    static func indexing(_ name: String) -> HPACKIndexing {
        name == "x-request-id" ? .nonIndexable : .indexable
    }
}
