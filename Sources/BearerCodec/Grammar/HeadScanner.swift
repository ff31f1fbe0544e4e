/// Why a scan stopped: the bytes so far are a valid beginning that needs more, or the head is refused.
enum ScanStop: Error {
    case incomplete
    case refused(HeadError)
}

/// ASCII bytes the grammar names.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let percent = UInt8(ascii: "%")
    static let slash = UInt8(ascii: "/")
}

/// A cursor over the bytes of one head that reads the grammar of RFC 9112 §2–5 and refuses every deviation.
///
/// Positions are offsets into the head's bytes, which each step is given as a `Span` (bounds-checked in every
/// build: a position past the end traps, it never reads another buffer's memory); nothing is copied. Reading past
/// the bytes at hand stops with `.incomplete`, or with `.headTooLarge` once the limit is reached, so a caller can
/// re-run it when more bytes arrive.
struct HeadScanner {
    let limits: HeadLimits
    var index = 0
    private let available: Int
    private let end: Int

    init(_ bytes: Span<UInt8>, limits: HeadLimits) {
        self.limits = limits
        self.available = bytes.count
        self.end = min(bytes.count, limits.headBytes)
    }

    @inline(__always) func byte(at position: Int, in bytes: Span<UInt8>) throws(ScanStop) -> UInt8 {
        guard position < end else {
            throw available >= limits.headBytes ? .refused(.headTooLarge) : .incomplete
        }
        return bytes[position]
    }

    /// One field line (RFC 9112 §5: `field-name ":" OWS field-value OWS CRLF`), or nil at the empty line that ends
    /// the section; either way consumed. The value excludes leading and trailing whitespace (RFC 9110 §5.5).
    mutating func fieldLine(in bytes: Span<UInt8>) throws(ScanStop) -> FieldLine? {
        let lineStart = index
        var byte = try self.byte(at: index, in: bytes)
        switch byte {
        case ASCII.cr:
            guard try self.byte(at: index + 1, in: bytes) == ASCII.lf else { throw .refused(.malformed(.bareCR)) }
            index += 2
            return nil
        case ASCII.lf: throw .refused(.malformed(.bareLF))
        // RFC 9112 §5.2: obs-fold; a server may refuse it, and a proxy that does not has to rewrite it.
        case ASCII.space, ASCII.tab: throw .refused(.malformed(.obsFold))
        default: break
        }
        while ByteClass.isTchar(byte) {
            index += 1
            byte = try self.byte(at: index, in: bytes)
        }
        guard index > lineStart else { throw .refused(.malformed(.fieldName)) }
        switch byte {
        case ASCII.colon: break
        // RFC 9112 §5.1: "No whitespace is allowed between the field name and colon"; a server MUST reject it.
        case ASCII.space, ASCII.tab: throw .refused(.malformed(.spaceBeforeColon))
        default: throw .refused(.malformed(.fieldName))
        }
        let name = lineStart..<index
        index += 1
        byte = try self.byte(at: index, in: bytes)
        while byte == ASCII.space || byte == ASCII.tab {
            index += 1
            byte = try self.byte(at: index, in: bytes)
        }
        let valueStart = index
        var valueEnd = index
        var sawObsText = false
        while true {
            if ByteClass.isVisible(byte) {
                index += 1
                valueEnd = index
            } else if byte == ASCII.space || byte == ASCII.tab {
                index += 1
            } else if byte >= 0x80 {
                sawObsText = true
                index += 1
                valueEnd = index
            } else if byte == ASCII.cr {
                guard try self.byte(at: index + 1, in: bytes) == ASCII.lf else { throw .refused(.malformed(.bareCR)) }
                break
            } else if byte == ASCII.lf {
                throw .refused(.malformed(.bareLF))
            } else {
                // NUL, the other controls and DEL (RFC 9110 §5.5: a recipient may reject them; a proxy must not
                // pass them on).
                throw .refused(.malformed(.fieldValue))
            }
            byte = try self.byte(at: index, in: bytes)
        }
        index += 2
        if sawObsText, !UTF8Check.isWellFormed(bytes, valueStart..<valueEnd) {
            throw .refused(.malformed(.invalidUTF8))
        }
        return FieldLine(name: name, value: valueStart..<valueEnd)
    }

    /// `HTTP-version` (RFC 9112 §2.3): `HTTP/1.0` or `HTTP/1.1`, as its minor digit. Another well-formed version
    /// is `.unsupportedVersion`; anything else is malformed.
    mutating func version(malformed reason: HeadError.Reason, in bytes: Span<UInt8>) throws(ScanStop) -> UInt8 {
        for expected in "HTTP/".utf8 {
            guard try byte(at: index, in: bytes) == expected else { throw .refused(.malformed(reason)) }
            index += 1
        }
        let major = try byte(at: index, in: bytes)
        let dot = try byte(at: index + 1, in: bytes)
        let minor = try byte(at: index + 2, in: bytes)
        guard ByteClass.isDigit(major), dot == UInt8(ascii: "."), ByteClass.isDigit(minor) else {
            throw .refused(.malformed(reason))
        }
        guard major == UInt8(ascii: "1"), minor == UInt8(ascii: "0") || minor == UInt8(ascii: "1") else {
            throw .refused(.unsupportedVersion)
        }
        index += 3
        return minor &- UInt8(ascii: "0")
    }

    /// A CRLF that ends a start line.
    mutating func lineEnd(malformed reason: HeadError.Reason, in bytes: Span<UInt8>) throws(ScanStop) {
        guard try byte(at: index, in: bytes) == ASCII.cr else { throw .refused(.malformed(reason)) }
        guard try byte(at: index + 1, in: bytes) == ASCII.lf else { throw .refused(.malformed(.bareCR)) }
        index += 2
    }
}
