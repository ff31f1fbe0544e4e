/// The methods the parser accepts: llhttp's list (NIOHTTP1's decoder, and so the product's before the codec) less
/// CONNECT — RFC 9110 §9, PATCH (RFC 5789), WebDAV's (RFC 4918, 3253, 3648, 3744, 4791, 5323, 5842), UPnP's and
/// caches' (M-SEARCH, NOTIFY, SUBSCRIBE, UNSUBSCRIBE, PURGE), LINK/UNLINK, SOURCE and QUERY. h11 and net/http take
/// any token; llhttp refuses a method it does not know, so the parser refuses it too (501).
package enum KnownMethod {
    static func isKnown(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Bool {
        switch range.count {
        case 3: equals(bytes, range, "GET") || equals(bytes, range, "PUT") || equals(bytes, range, "ACL")
        case 4:
            equals(bytes, range, "HEAD") || equals(bytes, range, "POST") || equals(bytes, range, "COPY")
                || equals(bytes, range, "MOVE") || equals(bytes, range, "LOCK") || equals(bytes, range, "BIND")
                || equals(bytes, range, "LINK")
        case 5:
            equals(bytes, range, "PATCH") || equals(bytes, range, "TRACE") || equals(bytes, range, "MKCOL")
                || equals(bytes, range, "MERGE") || equals(bytes, range, "PURGE") || equals(bytes, range, "QUERY")
        case 6:
            equals(bytes, range, "DELETE") || equals(bytes, range, "UNLOCK") || equals(bytes, range, "REPORT")
                || equals(bytes, range, "SEARCH") || equals(bytes, range, "REBIND") || equals(bytes, range, "UNBIND")
                || equals(bytes, range, "NOTIFY") || equals(bytes, range, "UNLINK") || equals(bytes, range, "SOURCE")
        case 7: equals(bytes, range, "OPTIONS")
        case 8:
            equals(bytes, range, "PROPFIND") || equals(bytes, range, "CHECKOUT") || equals(bytes, range, "M-SEARCH")
        case 9: equals(bytes, range, "PROPPATCH") || equals(bytes, range, "SUBSCRIBE")
        case 10: equals(bytes, range, "MKCALENDAR") || equals(bytes, range, "MKACTIVITY")
        case 11: equals(bytes, range, "UNSUBSCRIBE")
        default: false
        }
    }

    /// Methods are case-sensitive (RFC 9110 §9.1).
    package static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let pointer = name.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != pointer[offset] {
            return false
        }
        return true
    }
}
