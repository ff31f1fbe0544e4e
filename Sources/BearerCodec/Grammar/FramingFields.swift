/// What the fields that frame a message and manage its connection said: Content-Length, Transfer-Encoding and
/// Connection, shared by requests and responses. Each ambiguity is refused rather than resolved.
struct FramingFields {
    var contentLength: Int?
    var chunked = false
    var connection = ConnectionOptions()
    /// Whether a `Connection` that names a framing field is refused: in a request, where the proxy frames what it
    /// forwards and a client may not name what the proxy decides (SPEC §8); not in a response, which is framed by
    /// the field as received, and which the proxy re-frames for its client without it (RFC 9110 §7.6.1).
    let refusesFramingOptions: Bool

    init(refusesFramingOptions: Bool) {
        self.refusesFramingOptions = refusesFramingOptions
    }

    /// Looks at one field; refuses the ambiguous ones.
    mutating func note(_ field: FieldLine, in bytes: Span<UInt8>) throws(ScanStop) {
        switch field.name.count {
        case 10 where FieldName.equals(bytes, field.name, "connection"):
            try noteConnection(field.value, in: bytes)
        case 14 where FieldName.equals(bytes, field.name, "content-length"):
            // RFC 9112 §6.3 rule 5 lets a recipient merge identical values; the proxy refuses any second one, and
            // any value that is not plain digits (no sign, no list, no whitespace inside).
            guard contentLength == nil else { throw .refused(.malformed(.duplicateContentLength)) }
            let value = field.value
            guard !value.isEmpty, value.count <= 15, !Self.tabAround(value, in: bytes) else {
                throw .refused(.malformed(.contentLength))
            }
            var length = 0
            for index in value {
                let byte = bytes[index]
                guard ByteClass.isDigit(byte) else { throw .refused(.malformed(.contentLength)) }
                length = length * 10 + Int(byte &- UInt8(ascii: "0"))
            }
            contentLength = length
        case 17 where FieldName.equals(bytes, field.name, "transfer-encoding"):
            // Only one field, holding exactly `chunked`: any other coding list is refused (RFC 9112 §6.1 lets a
            // server answer 501 for codings it does not know; a proxy that passed them on would leave the framing
            // to a second parser).
            guard !chunked, FieldName.equals(bytes, field.value, "chunked"), !Self.tabAround(field.value, in: bytes)
            else {
                throw .refused(.malformed(.transferEncoding))
            }
            chunked = true
        default:
            break
        }
    }

    /// Whether a tab is part of the whitespace around a framing field's value. RFC 9110 §5.5 allows it (OWS), but
    /// llhttp — NIOHTTP1's decoder, and so the product's — refuses `Content-Length: 3<HTAB>` and does not read
    /// `Transfer-Encoding: chunked<HTAB>` as chunked: the proxy must never frame a message its own decoder would
    /// not (the long differential fuzz, `bench/floor/fuzz.sh`, checks it).
    ///
    /// Both scans are bounded by the bytes as well as by the line (a CR after the value, the colon before it), so
    /// they stop inside the span whatever range they are given.
    private static func tabAround(_ value: Range<Int>, in bytes: Span<UInt8>) -> Bool {
        var index = value.upperBound
        while index < bytes.count, bytes[index] == ASCII.space || bytes[index] == ASCII.tab {
            if bytes[index] == ASCII.tab { return true }
            index += 1
        }
        index = value.lowerBound - 1
        while index >= 0, index < bytes.count, bytes[index] == ASCII.space || bytes[index] == ASCII.tab {
            if bytes[index] == ASCII.tab { return true }
            index -= 1
        }
        return false
    }

    /// `Connection = #connection-option` (RFC 9110 §7.6.1, list syntax of §5.6.1: empty elements allowed, OWS
    /// around commas).
    private mutating func noteConnection(_ value: Range<Int>, in bytes: Span<UInt8>) throws(ScanStop) {
        var index = value.lowerBound
        while index < value.upperBound {
            var byte = bytes[index]
            if byte == ASCII.comma || byte == ASCII.space || byte == ASCII.tab {
                index += 1
                continue
            }
            let start = index
            while index < value.upperBound, ByteClass.isTchar(bytes[index]) { index += 1 }
            guard index > start else { throw .refused(.malformed(.connection)) }
            let option = start..<index
            // What follows a token: the end, a comma, or whitespace then a comma or the end.
            while index < value.upperBound {
                byte = bytes[index]
                if byte == ASCII.comma { break }
                guard byte == ASCII.space || byte == ASCII.tab else { throw .refused(.malformed(.connection)) }
                index += 1
            }
            if FieldName.equals(bytes, option, "close") {
                connection.close = true
            } else if FieldName.equals(bytes, option, "keep-alive") {
                connection.keepAlive = true
            } else if FieldName.equals(bytes, option, "upgrade") {
                connection.upgrade = true
            } else if refusesFramingOptions,
                FieldName.equals(bytes, option, "content-length")
                    || FieldName.equals(bytes, option, "transfer-encoding")
            {
                // A framing field declared hop-by-hop: the next hop would frame the message differently.
                throw .refused(.malformed(.connection))
            } else if !FieldName.isHopByHop(bytes, option) {
                guard connection.named.count < ConnectionOptions.maximumNamed else {
                    throw .refused(.malformed(.connection))
                }
                connection.named.append(option)
            }
        }
    }
}
