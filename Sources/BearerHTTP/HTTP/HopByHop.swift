import BearerJSON
import NIOHTTP1

/// The syntax of `Connection`'s list of options (RFC 9110 §7.6.1). Which fields are hop-by-hop, and what the proxy
/// does with each, is product policy: `Safety/HeaderPolicy`.
package enum HopByHop {
    /// Calls `body` with each non-empty element of a `Connection` value (RFC 9110 §7.6.1), trimmed, as bytes.
    /// Byte by byte, not with split/trim: this runs for nearly every response.
    package static func forEachOption(in value: String, _ body: (Substring.UTF8View.SubSequence) -> Void) {
        let bytes = value[...].utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            var low = start
            var high = end
            while low < high, isWhitespace(bytes[low]) { low = bytes.index(after: low) }
            while low < high, isWhitespace(bytes[bytes.index(before: high)]) { high = bytes.index(before: high) }
            if low < high { body(bytes[low..<high]) }
            start = end < bytes.endIndex ? bytes.index(after: end) : end
        }
    }

    /// Optional whitespace around list elements (RFC 9110 §5.6.1, §5.6.3): spaces and tabs.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
