import BearerJSON

/// `host[:port]`, the authority of RFC 3986 §3.2 — the one place it is taken apart, for an upstream URL, a `Host`
/// header, an absolute-form target, a `Location` and `--listen` alike.
package enum Authority {
    /// The parts of `text` as written, nothing validated: `host` keeps an IPv6 literal's brackets (RFC 3986
    /// §3.2.2), `port` is what follows the colon after the host (nil when there is none). Nil when an IPv6 literal's
    /// bracket is not closed or something other than `:port` follows it.
    package static func split(_ text: Substring) -> (host: Substring, port: Substring?)? {
        guard let (hostEnd, portStart) = splitOffsets(text.utf8.span) else { return nil }
        let bytes = text.utf8
        let host = text[..<bytes.index(bytes.startIndex, offsetBy: hostEnd)]
        return (host, portStart.map { text[bytes.index(bytes.startIndex, offsetBy: $0)...] })
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
    ///
    /// Read over the bytes (a `Span`, bounds-checked): every request's `Host` comes through here, and walking a
    /// `Substring`'s UTF-8 view costs ~2 % of a proxied request's CPU (docs/benchmarks.md).
    package static func isValid(_ text: Substring) -> Bool {
        let bytes = text.utf8.span
        guard let (hostEnd, portStart) = splitOffsets(bytes), hostEnd > 0 else { return false }
        if let portStart, port(bytes, from: portStart) == nil { return false }
        if bytes[0] == UInt8(ascii: "[") {
            // `[` … `]`: the inner bytes, at least one.
            guard hostEnd > 2 else { return false }
            for index in 1..<(hostEnd - 1) {
                let byte = bytes[index]
                guard byte.hexDigitValue != nil || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") else {
                    return false
                }
            }
            return true
        }
        var hexDigitsDue = 0
        for index in 0..<hostEnd {
            let byte = bytes[index]
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

    /// ``split(_:)`` as offsets into `bytes`: the host is `0..<hostEnd`, the port `portStart...` (nil when there
    /// is none).
    static func splitOffsets(_ bytes: Span<UInt8>) -> (hostEnd: Int, portStart: Int?)? {
        let count = bytes.count
        if count > 0, bytes[0] == UInt8(ascii: "[") {
            var close = 1
            while close < count, bytes[close] != UInt8(ascii: "]") { close += 1 }
            guard close < count else { return nil }
            if close + 1 == count { return (count, nil) }
            guard bytes[close + 1] == UInt8(ascii: ":") else { return nil }
            return (close + 1, close + 2)
        }
        var colon = count - 1
        while colon >= 0, bytes[colon] != UInt8(ascii: ":") { colon -= 1 }
        return colon < 0 ? (count, nil) : (colon, colon + 1)
    }

    /// The port written in `bytes[start...]`, as ``port(_:)`` reads one.
    package static func port(_ bytes: Span<UInt8>, from start: Int) -> Int? {
        let count = bytes.count - start
        guard (1...5).contains(count) else { return nil }
        var value = 0
        for index in start..<bytes.count {
            let byte = bytes[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value <= 65535 ? value : nil
    }

    /// Whether two valid authorities name the same host and port: the host compared without case (RFC 3986
    /// §6.2.2.1), a missing port equal only to a missing port.
    package static func same(_ first: Substring, _ second: Substring) -> Bool {
        guard let a = split(first), let b = split(second) else { return false }
        return a.host.lowercased() == b.host.lowercased() && a.port.flatMap(port) == b.port.flatMap(port)
    }

    /// A port: decimal digits only (no sign, no spaces), at most 65535 (RFC 3986 §3.2.3).
    package static func port(_ text: Substring) -> Int? {
        port(text.utf8.span, from: 0)
    }
}
