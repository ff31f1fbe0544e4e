/// What the fields that frame a message and manage its connection said: Content-Length, Transfer-Encoding and
/// Connection, shared by requests and responses. Each ambiguity is refused rather than resolved.
struct FramingFields {
    var contentLength: Int?
    var chunked = false
    var connection = ConnectionOptions()

    /// Looks at one field; refuses the ambiguous ones.
    mutating func note(_ field: FieldLine, in bytes: UnsafeRawBufferPointer) throws(ScanStop) {
        switch field.name.count {
        case 10 where FieldName.equals(bytes, field.name, "connection"):
            try noteConnection(field.value, in: bytes)
        case 14 where FieldName.equals(bytes, field.name, "content-length"):
            // RFC 9112 §6.3 rule 5 lets a recipient merge identical values; the proxy refuses any second one, and
            // any value that is not plain digits (no sign, no list, no whitespace inside).
            guard contentLength == nil else { throw .refused(.malformed(.duplicateContentLength)) }
            let value = field.value
            guard !value.isEmpty, value.count <= 15 else { throw .refused(.malformed(.contentLength)) }
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
            guard !chunked, FieldName.equals(bytes, field.value, "chunked") else {
                throw .refused(.malformed(.transferEncoding))
            }
            chunked = true
        default:
            break
        }
    }

    /// `Connection = #connection-option` (RFC 9110 §7.6.1, list syntax of §5.6.1: empty elements allowed, OWS
    /// around commas).
    private mutating func noteConnection(_ value: Range<Int>, in bytes: UnsafeRawBufferPointer) throws(ScanStop) {
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
            } else if FieldName.equals(bytes, option, "content-length")
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
