/// The methods the parser accepts: RFC 9110 §9 (less CONNECT, which a reverse proxy does not tunnel), PATCH
/// (RFC 5789) and WebDAV's (RFC 4918, 3253, 4791, 5323). All are names NIOHTTP1's llhttp knows; an extension method
/// it does not know would be refused there, so it is refused here too (501).
enum KnownMethod {
    static func isKnown(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Bool {
        switch range.count {
        case 3: equals(bytes, range, "GET") || equals(bytes, range, "PUT")
        case 4:
            equals(bytes, range, "HEAD") || equals(bytes, range, "POST") || equals(bytes, range, "COPY")
                || equals(bytes, range, "MOVE") || equals(bytes, range, "LOCK")
        case 5: equals(bytes, range, "PATCH") || equals(bytes, range, "TRACE") || equals(bytes, range, "MKCOL")
        case 6:
            equals(bytes, range, "DELETE") || equals(bytes, range, "UNLOCK") || equals(bytes, range, "REPORT")
                || equals(bytes, range, "SEARCH")
        case 7: equals(bytes, range, "OPTIONS")
        case 8: equals(bytes, range, "PROPFIND")
        case 9: equals(bytes, range, "PROPPATCH")
        case 10: equals(bytes, range, "MKCALENDAR")
        default: false
        }
    }

    /// Methods are case-sensitive (RFC 9110 §9.1).
    static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let pointer = name.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != pointer[offset] {
            return false
        }
        return true
    }
}
