/// Field names compared without case (RFC 9110 §5.1), on bytes and without allocating: a parsed head's names where
/// they lie in its buffer (no `String` per field), and the few names configuration and checks hold as strings.
/// Names are ASCII, so comparing bytes with the ASCII case folded (``fold(_:)``) avoids a lowercased copy.
///
/// Inlinable: the layers above call it for every field of every message, and a generic call into another module
/// is not specialized.
@usableFromInline
package enum FieldName {
    // MARK: Names in a buffer

    /// Whether the name at `bytes[range]` is `lowercase` (lowercase ASCII), ignoring ASCII case. `Span` checks
    /// every index.
    @inlinable
    @inline(__always)
    package static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        range.count == lowercase.utf8CodeUnitCount && hasPrefix(bytes, range, lowercase)
    }

    /// Whether the name at `bytes[range]` starts with `lowercase`, ignoring ASCII case.
    @inlinable
    package static func hasPrefix(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard range.count >= count else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<count where fold(bytes[range.lowerBound + offset]) != expected[offset] { return false }
        return true
    }

    /// Whether the name at `bytes[range]` is `lowercased` (a lowercase ASCII string known only at run time: a
    /// route's header rules, say), ignoring ASCII case.
    @inlinable
    package static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, lowercased: String) -> Bool {
        guard range.count == lowercased.utf8.count else { return false }
        var index = range.lowerBound
        for byte in lowercased.utf8 {
            guard fold(bytes[index]) == byte else { return false }
            index += 1
        }
        return true
    }

    /// Whether two names in the same buffer are the same name in any case.
    @inlinable
    package static func equals(_ bytes: Span<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        for offset in 0..<a.count where fold(bytes[a.lowerBound + offset]) != fold(bytes[b.lowerBound + offset]) {
            return false
        }
        return true
    }

    /// Hop-by-hop fields (RFC 9110 §7.6.1; the list of Go's `httputil.ReverseProxy` and of BearerHTTP's
    /// `HopByHop`): Connection, Keep-Alive, Proxy-Connection, Proxy-Authenticate, Proxy-Authorization, TE, Trailer,
    /// Transfer-Encoding, Upgrade.
    package static func isHopByHop(_ bytes: Span<UInt8>, _ name: Range<Int>) -> Bool {
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

    // MARK: Names as strings

    /// Whether `name` equals `lowercase` (which must already be lowercase ASCII), ignoring ASCII case.
    @inlinable
    @inline(__always)
    package static func equals(_ name: String, _ lowercase: StaticString) -> Bool {
        equals(bytes: name.utf8, lowercase)
    }

    /// Whether `name` starts with `lowercase`, ignoring ASCII case.
    @inlinable
    package static func hasPrefix(_ name: String, _ lowercase: StaticString) -> Bool {
        hasPrefix(bytes: name.utf8, lowercase)
    }

    /// Whether `name` equals `lowercased` (a lowercase ASCII string known only at run time), ignoring ASCII case.
    @inlinable
    package static func equals(_ name: String, lowercased: String) -> Bool {
        guard name.utf8.count == lowercased.utf8.count else { return false }
        return zip(name.utf8, lowercased.utf8).allSatisfy { fold($0) == $1 }
    }

    /// The comparison of a name's UTF-8 bytes (a slice of a header value, say).
    @inlinable
    @inline(__always)
    package static func equals<Bytes: Collection<UInt8>>(bytes: Bytes, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return hasPrefix(bytes: bytes, lowercase)
    }

    @inlinable
    package static func hasPrefix<Bytes: Collection<UInt8>>(bytes: Bytes, _ lowercase: StaticString) -> Bool {
        guard bytes.count >= lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            var index = 0
            for byte in bytes {
                guard index < expected.count else { return true }
                if fold(byte) != expected[index] { return false }
                index += 1
            }
            return index == expected.count
        }
    }

    /// The byte with the ASCII case folded to lower.
    @inlinable
    @inline(__always)
    static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
