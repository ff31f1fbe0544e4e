import BearerJSON

/// Allocation-free comparisons of header names. Field names are case-insensitive (RFC 9110 §5.1) and ASCII, so
/// comparing bytes with the ASCII case bit folded avoids building a lowercased copy on every request.
/// Inlinable: other targets call it per header, and a generic call into another module is not specialized.
@usableFromInline
package enum HeaderName {
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

    /// ``equals(_:_:)`` for a name's UTF-8 bytes (a slice of a header value, say).
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

    /// Whether the name at `bytes[range]` starts with `lowercase`, ignoring ASCII case: a parsed head's field name
    /// read where it lies (#24 condition 5, no `String` per field). `Span` checks every index.
    @inlinable
    package static func hasPrefix(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard range.count >= count else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<count where fold(bytes[range.lowerBound + offset]) != expected[offset] { return false }
        return true
    }

    /// Whether the name at `bytes[range]` is `lowercase`, ignoring ASCII case.
    @inlinable
    @inline(__always)
    package static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        range.count == lowercase.utf8CodeUnitCount && hasPrefix(bytes, range, lowercase)
    }

    /// Whether the name at `bytes[range]` is `lowercased` (a lowercase ASCII string known only at run time),
    /// ignoring ASCII case.
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

    /// Whether `name` equals `lowercased` (a lowercase ASCII string known only at run time), ignoring ASCII case.
    @inlinable
    package static func equals(_ name: String, lowercased: String) -> Bool {
        guard name.utf8.count == lowercased.utf8.count else { return false }
        return zip(name.utf8, lowercased.utf8).allSatisfy { fold($0) == $1 }
    }

    @inlinable
    @inline(__always)
    package static func fold(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
