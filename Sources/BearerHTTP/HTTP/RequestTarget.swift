import BearerJSON

/// The request target of an origin-form request (RFC 9112 §3.2.1), split without decoding anything.
///
/// The path is matched and forwarded exactly as received — the prefix match and the upstream see the same bytes —
/// so a percent-encoded `%2F` stays `%2F` and the query string is kept byte for byte (SPEC §8).
package struct RequestTarget: Equatable {
    /// The raw path, from the leading `/` up to (not including) `?`.
    package let path: Substring
    /// The raw query after `?`, or nil when there was no `?` at all (so `/x?` keeps its `?`).
    package let query: Substring?

    /// Why a target was refused.
    package enum Rejection: Error, Equatable {
        case notOriginForm
        case dotSegment
        case forbiddenCharacter
        /// Encoded more times than anyone does, in IIS's `%uXXXX`, or as an overlong UTF-8 sequence: spellings a
        /// lenient decoder upstream could read as `.` or `/` (CVE-2000-0884, Tomcat CVE-2008-2938).
        case ambiguousEncoding
        /// A `%` not followed by two hexadecimal digits (RFC 3986 §2.1), in the path or the query: upstreams decode
        /// it differently (Go refuses it, others keep or drop it), so the path the proxy checked is not the one
        /// they would serve.
        case malformedPercentEncoding
    }

    /// How many rounds of percent-decoding a path may need before it reads as plain bytes; a path still encoded
    /// after that is refused.
    package static let maximumDecodingRounds = 3

    /// Splits and checks `uri`. Rejects `.`/`..` segments in every spelling (SPEC §9) — raw; percent-encoded in any
    /// case and any number of times (`%2e`, `%252e`: an upstream or framework that decodes twice reads `..`);
    /// with `\`, `%2F` or `%5C` as separators; as fullwidth and other compatibility dots and slashes (`%EF%BC%8E`,
    /// which NFKC turns into `.`); with path parameters (`..;`, `.;x`, `..%3b` — Tomcat and Spring
    /// strip `;params` and then read `..`); with trailing spaces (Windows drops them) — because an upstream that
    /// normalises or decodes them could serve a path outside the route's prefix (CVE-2026-44373 in Nitro was
    /// exactly `/api/orders/..%2fadmin`); and NUL or control characters, raw or encoded.
    package static func parse(_ uri: String) throws(Rejection) -> RequestTarget {
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
        // One pass over the target: control characters, and every `%` followed by two hexadecimal digits.
        var hexDigitsDue = 0
        for byte in uri.utf8 {
            if byte < 0x20 || byte == 0x7F { throw .forbiddenCharacter }
            if hexDigitsDue > 0 {
                guard byte.hexDigitValue != nil else { throw .malformedPercentEncoding }
                hexDigitsDue -= 1
            } else if byte == UInt8(ascii: "%") {
                hexDigitsDue = 2
            }
        }
        if hexDigitsDue > 0 { throw .malformedPercentEncoding }
        try checkDotSegments(path, .everySpelling)
        return RequestTarget(path: path, query: query)
    }

    /// Which spellings of `.` and `..` a path is refused for. Two rules, because two different parties write paths:
    /// the person who configures the proxy, and any client that can reach it.
    package enum DotSegmentRule {
        /// The dot segments of RFC 3986 itself: a segment (between `/`s) of one or two dots, each raw or as `%2E`
        /// in either case — a percent-encoded unreserved character is that character (§6.2.2.2), so every server
        /// that normalises a path removes both spellings (§5.2.4). For a path written in routes.json (an upstream's
        /// base path, a route's prefix): it must name its path exactly, and it comes from whoever configures the
        /// proxy, not from a client trying to slip past a prefix; refusing more would turn away URLs that are
        /// accepted today.
        case uriSyntax
        /// Also every spelling a lenient or buggy server may read as one (see ``RequestTarget/parse(_:)``), and
        /// encodings that only such a server could make sense of. For a client's request target.
        case everySpelling
    }

    /// Throws ``Rejection/dotSegment`` when `path` has a `.` or `..` segment under `rule`; under `.everySpelling`
    /// also ``Rejection/forbiddenCharacter`` and ``Rejection/ambiguousEncoding`` for what decoding turns up.
    package static func checkDotSegments(_ path: Substring, _ rule: DotSegmentRule) throws(Rejection) {
        switch rule {
        case .uriSyntax:
            for segment in path.utf8.split(separator: UInt8(ascii: "/")) where isURIDotSegment(segment) {
                throw .dotSegment
            }
        case .everySpelling:
            try checkEverySpelling(path)
        }
    }

    /// Whether `segment` is one or two dots, each `.` or `%2E` (any case).
    private static func isURIDotSegment(_ segment: Substring.UTF8View.SubSequence) -> Bool {
        var dots = 0
        var index = segment.startIndex
        while index < segment.endIndex {
            if segment[index] == UInt8(ascii: ".") {
                index = segment.index(after: index)
            } else if segment[index...].starts(with: "%2".utf8),
                segment.index(index, offsetBy: 2) < segment.endIndex,
                segment[segment.index(index, offsetBy: 2)] | 0x20 == UInt8(ascii: "e")
            {
                index = segment.index(index, offsetBy: 3)
            } else {
                return false
            }
            dots += 1
        }
        return dots == 1 || dots == 2
    }

    /// Checks the path as it is and after each round of percent-decoding. Most paths have no `%`: one scan of
    /// their bytes, no allocation.
    private static func checkEverySpelling(_ path: Substring) throws(Rejection) {
        guard path.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 >= 0x80 }) else {
            return try checkDecodedSegments(path.utf8)
        }
        var bytes = Array(path.utf8)
        try checkFoldedSegments(bytes)
        for _ in 0..<maximumDecodingRounds {
            guard let decoded = try decodedOnce(bytes) else { return }
            try checkFoldedSegments(decoded)
            bytes = decoded
        }
        if try decodedOnce(bytes) != nil { throw .ambiguousEncoding }
    }

    /// ``checkDecodedSegments(_:)`` on `bytes`, and again with the characters that Unicode compatibility
    /// normalisation (NFKC, which Java, Python and .NET frameworks apply to paths) turns into `.`, `/` or `\`
    /// replaced by them: `．` U+FF0E, `․` U+2024, `﹒` U+FE52, `／` U+FF0F, `＼` U+FF3C.
    private static func checkFoldedSegments(_ bytes: [UInt8]) throws(Rejection) {
        try checkDecodedSegments(bytes)
        guard bytes.contains(where: { $0 == 0xEF || $0 == 0xE2 }) else { return }
        var folded: [UInt8] = []
        folded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if index + 2 < bytes.count, let ascii = compatibilityASCII(bytes[index], bytes[index + 1], bytes[index + 2])
            {
                folded.append(ascii)
                index += 3
            } else {
                folded.append(bytes[index])
                index += 1
            }
        }
        try checkDecodedSegments(folded)
    }

    /// The ASCII `.`, `/` or `\` that a three-byte UTF-8 sequence becomes under NFKC, if it is one of those.
    private static func compatibilityASCII(_ first: UInt8, _ second: UInt8, _ third: UInt8) -> UInt8? {
        switch (first, second, third) {
        case (0xEF, 0xBC, 0x8E), (0xE2, 0x80, 0xA4), (0xEF, 0xB9, 0x92): UInt8(ascii: ".")
        case (0xEF, 0xBC, 0x8F): UInt8(ascii: "/")
        case (0xEF, 0xBC, 0xBC): UInt8(ascii: "\\")
        default: nil
        }
    }

    /// One round of percent-decoding, or nil when there was nothing to decode. An encoded control character, an
    /// overlong UTF-8 sequence or IIS's `%uXXXX` is refused on the way.
    private static func decodedOnce(_ bytes: [UInt8]) throws(Rejection) -> [UInt8]? {
        var decoded: [UInt8] = []
        var changed = false
        var index = 0
        decoded.reserveCapacity(bytes.count)
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                if index + 2 < bytes.count, let high = bytes[index + 1].hexDigitValue,
                    let low = bytes[index + 2].hexDigitValue
                {
                    let value = high << 4 | low
                    if value < 0x20 || value == 0x7F { throw .forbiddenCharacter }
                    decoded.append(value)
                    changed = true
                    index += 3
                    continue
                }
                if index + 5 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "u"),
                    bytes[(index + 2)...(index + 5)].allSatisfy({ $0.hexDigitValue != nil })
                {
                    throw .ambiguousEncoding
                }
            }
            decoded.append(byte)
            index += 1
        }
        guard changed else { return nil }
        try refuseOverlong(decoded)
        return decoded
    }

    /// UTF-8 never uses C0/C1 leads or E0 80–9F / F0 80–8F: such sequences exist only to spell `.` or `/` past a
    /// filter (RFC 3629 §3).
    private static func refuseOverlong(_ bytes: [UInt8]) throws(Rejection) {
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case 0xC0, 0xC1: throw .ambiguousEncoding
            case 0xE0 where index + 1 < bytes.count && bytes[index + 1] < 0xA0: throw .ambiguousEncoding
            case 0xF0 where index + 1 < bytes.count && bytes[index + 1] < 0x90: throw .ambiguousEncoding
            default: continue
            }
        }
    }

    /// Refuses a segment that reads `.` or `..` once its `;parameters` and trailing spaces are set aside; `/` and
    /// `\` both separate segments.
    private static func checkDecodedSegments<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(Rejection) {
        var dots = 0
        var other = false
        var spaces = false
        var parameters = false
        func endSegment() throws(Rejection) {
            if !other && (dots == 1 || dots == 2) { throw .dotSegment }
            dots = 0
            other = false
            spaces = false
            parameters = false
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "\\"): try endSegment()
            case _ where parameters: continue
            case UInt8(ascii: ";"): parameters = true
            case UInt8(ascii: "."): if spaces { other = true } else { dots += 1 }
            case UInt8(ascii: " "): spaces = true
            default: other = true
            }
        }
        try endSegment()
    }

    package init(path: Substring, query: Substring?) {
        self.path = path
        self.query = query
    }
}
