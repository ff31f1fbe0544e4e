/// Well-formed UTF-8 (Unicode 15, table 3-7): no overlong forms, no surrogates, nothing above U+10FFFF.
///
/// RFC 9110 §5.5 lets a field value carry obs-text (%x80-FF) as opaque bytes; NIOHTTP1 turns every value into a
/// Swift `String`, which repairs ill-formed UTF-8 into U+FFFD. A proxy must forward bytes unchanged or refuse them,
/// so the parser accepts obs-text only where it is well-formed UTF-8 — the bytes NIO would have kept as they are.
enum UTF8Check {
    static func isWellFormed(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let count: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: count = 2
            case 0xE0:
                count = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: count = 3
            case 0xED:
                count = 3
                high = 0x9F
            case 0xF0:
                count = 4
                low = 0x90
            case 0xF1...0xF3: count = 4
            case 0xF4:
                count = 4
                high = 0x8F
            default: return false
            }
            guard end - index >= count else { return false }
            let second = bytes[index + 1]
            guard second >= low, second <= high else { return false }
            for offset in 2..<count where bytes[index + offset] & 0xC0 != 0x80 {
                return false
            }
            index += count
        }
        return true
    }
}
