/// Field names compared without case (RFC 9110 §5.1) on bytes, without allocating.
package enum FieldName {
    /// Whether `bytes[range]`, a token, is `lowercased` (lowercase letters and "-") in any case. For tchar input,
    /// `byte | 0x20` equals a lowercase letter or "-" only when the byte is that letter in either case or "-".
    @inline(__always)
    package static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercased: StaticString)
        -> Bool
    {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        let pointer = lowercased.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] | 0x20 != pointer[offset] {
            return false
        }
        return true
    }

    /// Whether two tokens are the same name in any case.
    package static func equals(_ bytes: Span<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        for offset in 0..<a.count where bytes[a.lowerBound + offset] | 0x20 != bytes[b.lowerBound + offset] | 0x20 {
            return false
        }
        return true
    }

    /// Hop-by-hop fields (RFC 9110 §7.6.1; the list of Go's `httputil.ReverseProxy` and of the product's
    /// `HopByHop`): Connection, Keep-Alive, Proxy-Connection, Proxy-Authenticate, Proxy-Authorization, TE, Trailer,
    /// Transfer-Encoding, Upgrade.
    static func isHopByHop(_ bytes: Span<UInt8>, _ name: Range<Int>) -> Bool {
        switch name.count {
        case 2: equals(bytes, name, "te")
        case 7: equals(bytes, name, "trailer") || equals(bytes, name, "upgrade")
        case 10: equals(bytes, name, "connection") || equals(bytes, name, "keep-alive")
        case 16: equals(bytes, name, "proxy-connection")
        case 17: equals(bytes, name, "transfer-encoding")
        case 18: equals(bytes, name, "proxy-authenticate")
        case 19: equals(bytes, name, "proxy-authorization")
        default: false
        }
    }
}
