import BearerCodec
import BearerHTTP
import NIOCore
import NIOHPACK

/// The client connection's HTTP/1.1 response head and trailer section as HTTP/2 header sections (RFC 9113 §8.3.2):
/// `:status` first, names in lowercase, and without the fields that belong to one HTTP/1.1 connection (RFC 9113
/// §8.2.2) — `Connection` and every field it names, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`.
/// The bytes come from the proxy's own encoder and were read by the strict decoder (``ResponseDecoder``) already.
enum HTTP2ResponseFields {
    /// The header section a client's stream gets for the upstream's `response`, built from the upstream's field lines
    /// in one pass, with no HTTP/1.1 head written and read again: the fields the HTTP/1.1 head would carry
    /// (``Forwarding/clientField(_:of:in:binding:browser:signsProofs:)`` decides each line for both), in their order,
    /// then the request id and the CORS fields. Framing and `Connection` are HTTP/1.1's and never written (RFC 9113
    /// §8.2.2): a `Content-Length` the upstream sent is kept, and NIOHTTP2 holds the DATA to it (§8.1.1).
    static func forwarded(
        _ response: UpstreamResponse, binding: RouteBinding, adding additions: Forwarding.ResponseAdditions
    ) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(16)
        headers.add(name: ":status", value: String(response.head.status))
        let bytes = response.bytes
        let span = bytes.readableBytesUInt8Span
        let browser = additions.corsOrigin != nil
        let signsProofs = binding.proofs != nil
        var lines = FieldLines(fieldsStart: response.head.fieldsStart, length: response.head.length)
        while let line = lines.next(in: span) {
            let value: String
            switch Forwarding.clientField(
                line.field, of: response, in: span, binding: binding, browser: browser, signsProofs: signsProofs)
            {
            case .dropped:
                continue
            case .kept:
                value =
                    bytes.getString(at: bytes.readerIndex + line.field.value.lowerBound, length: line.field.value.count)
                    ?? ""
            case .location(let rewritten):
                value = rewritten
            }
            let name = lowercasedName(span, line.field.name)
            headers.add(name: name, value: value, indexing: indexing(name))
        }
        headers.add(name: "x-request-id", value: additions.requestID, indexing: indexing("x-request-id"))
        if let origin = additions.corsOrigin {
            for (name, value) in CORS.fields(origin: origin) { headers.add(name: name, value: value) }
        }
        return headers
    }

    /// The field name at `bytes[range]` in lowercase (RFC 9113 §8.2.1), in one pass. The codec has checked it is a
    /// token (RFC 9110 §5.6.2), so every byte is ASCII.
    static func lowercasedName(_ bytes: Span<UInt8>, _ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { out in
            for offset in 0..<range.count {
                let byte = bytes[range.lowerBound + offset]
                out[offset] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            }
            return range.count
        }
    }

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
            let name = lowercasedName(span, line.field.name)
            guard let value = string(line.field.value),
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
