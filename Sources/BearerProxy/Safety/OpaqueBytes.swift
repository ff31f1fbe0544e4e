/// Detects bytes of a request that NIO's parser could not hand over unchanged.
///
/// NIO builds header values and the request target as Swift strings, which repairs bytes that are not UTF-8 into
/// U+FFFD (EF BF BD). A proxy must pass such bytes through unchanged or refuse the message (RFC 9110 §5.5, SPEC §8);
/// since the original bytes are gone, the request is refused. A client that sent a literal U+FFFD is refused too —
/// the two cannot be told apart, and that character has no business in a header.
enum OpaqueBytes {
    /// Whether `value` contains U+FFFD, the mark of a byte sequence that was not UTF-8.
    static func wereReplaced(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            // Almost every value is ASCII: one pass finding no 0xEF is the whole cost.
            var index = 0
            while let found = bytes[index...].firstIndex(of: 0xEF) {
                if found + 2 < bytes.count, bytes[found + 1] == 0xBF, bytes[found + 2] == 0xBD { return true }
                index = found + 1
            }
            return false
        }
    }
}
