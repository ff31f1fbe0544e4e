/// `host[:port]`, the authority of RFC 3986 §3.2 — the one place it is taken apart, for an upstream URL, a `Host`
/// header, an absolute-form target, a `Location` and `--listen` alike.
enum Authority {
    /// The parts of `text` as written, nothing validated: `host` keeps an IPv6 literal's brackets (RFC 3986
    /// §3.2.2), `port` is what follows the colon after the host (nil when there is none). Nil when an IPv6 literal's
    /// bracket is not closed or something other than `:port` follows it.
    static func split(_ text: Substring) -> (host: Substring, port: Substring?)? {
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
    static func unbracketed(_ host: Substring) -> Substring {
        host.utf8.first == UInt8(ascii: "[") && host.utf8.last == UInt8(ascii: "]") ? host.dropFirst().dropLast() : host
    }

    /// `host` as an authority writes it: an IPv6 literal in brackets.
    static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// A port: decimal digits only (no sign, no spaces), at most 65535 (RFC 3986 §3.2.3).
    static func port(_ text: Substring) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text), value <= 65535
        else { return nil }
        return value
    }
}
