import BearerJSON

/// `host[:port]`, the authority of RFC 3986 §3.2 — the one place it is taken apart, for an upstream URL, a `Host`
/// header, an absolute-form target, a `Location` and `--listen` alike.
package enum Authority {
    /// The parts of `text` as written, nothing validated: `host` keeps an IPv6 literal's brackets (RFC 3986
    /// §3.2.2), `port` is what follows the colon after the host (nil when there is none). Nil when an IPv6 literal's
    /// bracket is not closed or something other than `:port` follows it.
    package static func split(_ text: Substring) -> (host: Substring, port: Substring?)? {
        let bytes = text.utf8
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let rest = text[bytes.index(after: close)...]
            if rest.isEmpty { return (text[...close], nil) }
            guard rest.utf8.first == UInt8(ascii: ":") else { return nil }
            return (text[...close], rest.dropFirst())
        }
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")) else { return (text, nil) }
        return (text[..<colon], text[bytes.index(after: colon)...])
    }

    /// `host` without an IPv6 literal's brackets.
    package static func unbracketed(_ host: Substring) -> Substring {
        host.utf8.first == UInt8(ascii: "[") && host.utf8.last == UInt8(ascii: "]") ? host.dropFirst().dropLast() : host
    }

    /// `host` as an authority writes it: an IPv6 literal in brackets.
    package static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// Whether `text` is an authority as `Host` and an absolute-form target carry it (RFC 9110 §7.2, RFC 3986
    /// §3.2): a non-empty host — an IPv6 literal in brackets (hex digits, `:` and `.`), or a reg-name or IPv4
    /// address (unreserved characters, sub-delims but `,`, and `%HH`) — then nothing or `:` and a port. `127.0?0.1`
    /// is not one; nor is `a b`, `host:`, `host:x` or `[::1`.
    package static func isValid(_ text: Substring) -> Bool {
        guard let (host, port) = split(text), !host.isEmpty else { return false }
        if let port, Self.port(port) == nil { return false }
        let bytes = host.utf8
        if bytes.first == UInt8(ascii: "[") {
            let inner = unbracketed(host).utf8
            return !inner.isEmpty
                && inner.allSatisfy { $0.hexDigitValue != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
        }
        var hexDigitsDue = 0
        for byte in bytes {
            if hexDigitsDue > 0 {
                guard byte.hexDigitValue != nil else { return false }
                hexDigitsDue -= 1
                continue
            }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                continue
            case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
                UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ";"), UInt8(ascii: "="):
                continue
            case UInt8(ascii: "%"):
                hexDigitsDue = 2
            default:
                return false
            }
        }
        return hexDigitsDue == 0
    }

    /// Whether two valid authorities name the same host and port: the host compared without case (RFC 3986
    /// §6.2.2.1), a missing port equal only to a missing port.
    package static func same(_ first: Substring, _ second: Substring) -> Bool {
        guard let a = split(first), let b = split(second) else { return false }
        return a.host.lowercased() == b.host.lowercased() && a.port.flatMap(port) == b.port.flatMap(port)
    }

    /// A port: decimal digits only (no sign, no spaces), at most 65535 (RFC 3986 §3.2.3).
    package static func port(_ text: Substring) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text), value <= 65535
        else { return nil }
        return value
    }
}
