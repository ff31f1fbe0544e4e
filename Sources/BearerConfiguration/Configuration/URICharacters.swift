import BearerHTTP
import BearerJSON

/// Character classes from RFC 3986 §2 and RFC 9110 §5.6.2, tested on UTF-8 bytes.
package enum URICharacters {
    package static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    package static func isAlpha(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"` (RFC 3986 §2.3).
    static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || "-._~".utf8.contains(byte)
    }

    /// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="` (RFC 3986 §2.2).
    static func isSubDelimiter(_ byte: UInt8) -> Bool { "!$&'()*+,;=".utf8.contains(byte) }

    /// `pchar` without `pct-encoded`: the bytes a path segment may hold literally (RFC 3986 §3.3).
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || isSubDelimiter(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "@")
    }

    /// `tchar`, the characters of a token such as a method or a header name (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// `token = 1*tchar` (RFC 9110 §5.6.2).
    package static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// Whether every `%` starts a `%HH` escape (RFC 3986 §2.1).
    static func hasValidPercentEncoding(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return false
                }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    /// The first byte of a path (made of segments and `/`) that may not appear literally, as a printable string.
    static func firstInvalidPathCharacter(_ path: some StringProtocol) -> String? {
        for scalar in path.unicodeScalars {
            let allowed =
                scalar.isASCII
                && (isPathCharacter(UInt8(scalar.value)) || scalar == "/" || scalar == "%")
            if !allowed { return printable(scalar) }
        }
        return nil
    }

    /// A character as it can be shown in a message: control characters and spaces spelled out.
    package static func printable(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case " ": return "a space"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            return "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
        default: return "\"\(scalar)\""
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
