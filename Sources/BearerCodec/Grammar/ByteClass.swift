/// The byte classes of the head grammar, as 128-bit sets (one shift and mask a byte, no table in memory):
/// `tchar` (RFC 9110 §5.6.2), the request-target's characters (RFC 3986 §2–3: unreserved, sub-delims, ":", "@",
/// "/", "?" and "%", and the seven below that real clients send unencoded), and the Host field's (RFC 3986 §3.2.2–3: reg-name, IP-literal, port). Bytes of 0x80 and above
/// belong to none of them. The masks are checked against the grammar by `ByteClassTests`.
enum ByteClass {
    /// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    @inline(__always) static func isTchar(_ byte: UInt8) -> Bool {
        contains(byte, low: 0x03FF_6CFA_0000_0000, high: 0x57FF_FFFF_C7FF_FFFE)
    }

    /// The bytes a request-target may hold: pchar, "/" and "?" (RFC 3986 §3.3–3.4), with "%" checked apart — and
    /// `[ ] { } | ^` and the backtick, which RFC 3986 does not allow there but browsers send unencoded in a query
    /// (the WHATWG URL standard's query percent-encode set leaves them; `filter[name]=…` is everyday API syntax), and
    /// all three reference parsers accept (SPEC §3: a real client's request is never refused). None of them delimits
    /// anything for a router or the path checks; `\`, `"`, `<`, `>`, `#`, controls and spaces stay refused.
    @inline(__always) static func isTargetByte(_ byte: UInt8) -> Bool {
        contains(byte, low: 0xAFFF_FFF2_0000_0000, high: 0x7FFF_FFFF_EFFF_FFFF)
    }

    /// The bytes of `uri-host [ ":" port ]`: unreserved, sub-delims, "%", ":", "[" and "]".
    @inline(__always) static func isHostByte(_ byte: UInt8) -> Bool {
        contains(byte, low: 0x2FFF_7FF2_0000_0000, high: 0x47FF_FFFE_AFFF_FFFE)
    }

    /// field-vchar minus obs-text: VCHAR (RFC 5234 B.1), %x21-7E.
    @inline(__always) static func isVisible(_ byte: UInt8) -> Bool {
        byte &- 0x21 < 0x5E
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    @inline(__always) static func isAlpha(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- UInt8(ascii: "a") < 26
    }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always) static func hexValue(_ byte: UInt8) -> Int? {
        if isDigit(byte) { return Int(byte &- UInt8(ascii: "0")) }
        let folded = byte | 0x20
        if folded &- UInt8(ascii: "a") < 6 { return Int(folded &- UInt8(ascii: "a")) + 10 }
        return nil
    }

    @inline(__always) private static func contains(_ byte: UInt8, low: UInt64, high: UInt64) -> Bool {
        if byte < 64 { return (low >> UInt64(byte)) & 1 == 1 }
        if byte < 128 { return (high >> UInt64(byte &- 64)) & 1 == 1 }
        return false
    }
}
