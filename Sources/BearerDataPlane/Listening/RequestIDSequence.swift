/// The ids given to requests that bring none: `<prefix><sequence>`, the sequence in lower-case hex.
///
/// Built in one pass into the string's own storage: `String(_:radix:)` and a concatenation were 1 % of the proxy's
/// user time (perf; docs/benchmarks.md). An id of up to 15 bytes is a small string, with no allocation at all.
struct RequestIDSequence {
    private let prefix: [UInt8]
    private var counter: UInt64 = 0

    init(prefix: String) {
        self.prefix = Array(prefix.utf8)
    }

    /// The next id.
    package mutating func next() -> String {
        counter &+= 1
        return Self.format(prefix: prefix, counter: counter)
    }

    /// `prefix` followed by `counter` in lower-case hex, without leading zeros.
    static func format(prefix: [UInt8], counter: UInt64) -> String {
        let digits = max(1, (UInt64.bitWidth - counter.leadingZeroBitCount + 3) / 4)
        let length = prefix.count + digits
        return String(unsafeUninitializedCapacity: length) { buffer in
            // Checked once, in release builds too: every index written below is under `length`.
            precondition(buffer.count >= length)
            let start = buffer.initialize(fromContentsOf: prefix)
            var value = counter
            var index = start + digits
            while index > start {
                index -= 1
                let digit = UInt8(truncatingIfNeeded: value & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
                value >>= 4
            }
            return length
        }
    }
}
