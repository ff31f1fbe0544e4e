/// The request target of an origin-form request (RFC 9112 §3.2.1), split without decoding anything.
///
/// The path is matched and forwarded exactly as received — the prefix match and the upstream see the same bytes —
/// so a percent-encoded `%2F` stays `%2F` and the query string is kept byte for byte (SPEC §8).
struct RequestTarget: Equatable {
    /// The raw path, from the leading `/` up to (not including) `?`.
    let path: Substring
    /// The raw query after `?`, or nil when there was no `?` at all (so `/x?` keeps its `?`).
    let query: Substring?

    /// Why a target was refused.
    enum Rejection: Error, Equatable {
        case notOriginForm
        case dotSegment
        case forbiddenCharacter
    }

    /// Splits and checks `uri`. Rejects `.`/`..` segments — raw, percent-encoded in any case, and with `\`, `%2F`
    /// or `%5C` as separators — because an upstream that normalises or decodes them could serve a path outside the
    /// route's prefix (CVE-2026-44373 in Nitro was exactly `/api/orders/..%2fadmin`); and NUL or control
    /// characters, raw or encoded.
    static func parse(_ uri: String) throws(Rejection) -> RequestTarget {
        guard uri.utf8.first == UInt8(ascii: "/") else { throw .notOriginForm }
        let path: Substring
        let query: Substring?
        if let mark = uri.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = uri[..<mark]
            query = uri[uri.index(after: mark)...]
        } else {
            path = uri[...]
            query = nil
        }
        for byte in uri.utf8 where byte < 0x20 || byte == 0x7F { throw .forbiddenCharacter }
        try checkSegments(path)
        return RequestTarget(path: path, query: query)
    }

    /// Scans `path` once, splitting on every spelling of a separator and decoding `%2E`, and refuses a segment that
    /// reads `.` or `..`, or an encoded control character.
    private static func checkSegments(_ path: Substring) throws(Rejection) {
        let bytes = path.utf8
        var dots = 0
        var other = false
        var index = bytes.startIndex
        func endSegment() throws(Rejection) {
            if !other && (dots == 1 || dots == 2) { throw .dotSegment }
            dots = 0
            other = false
        }
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                if first < bytes.endIndex {
                    let second = bytes.index(after: first)
                    if second < bytes.endIndex, let high = hexValue(bytes[first]), let low = hexValue(bytes[second]) {
                        index = bytes.index(after: second)
                        switch high << 4 | low {
                        case UInt8(ascii: "/"), UInt8(ascii: "\\"): try endSegment()
                        case UInt8(ascii: "."): dots += 1
                        case 0..<0x20, 0x7F: throw .forbiddenCharacter
                        default: other = true
                        }
                        continue
                    }
                }
            }
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "\\"): try endSegment()
            case UInt8(ascii: "."): dots += 1
            default: other = true
            }
            index = bytes.index(after: index)
        }
        try endSegment()
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
