import Testing

@testable import BearerDataPlane

/// The ids the proxy gives requests that bring none (SPEC §9's `X-Request-Id`).
@Suite("RequestIDSequence: <prefix><counter in hex>")
struct RequestIDSequenceTests {
    /// An independent rendering: the digits from the standard library's radix conversion.
    static func expected(_ prefix: String, _ counter: UInt64) -> String {
        prefix + String(counter, radix: 16)
    }

    @Test(
        "every digit count, the edges of each, and the largest counter",
        arguments: [0, 1, 9, 10, 15, 16, 255, 256, 0xabcdef, 0x1_0000_0000, UInt64.max >> 4, UInt64.max] as [UInt64])
    func formats(_ counter: UInt64) {
        for prefix in ["", "1f2e3d4c-", "a-much-longer-prefix-than-a-small-string-holds-"] {
            let id = RequestIDSequence.format(prefix: Array(prefix.utf8), counter: counter)
            #expect(id == Self.expected(prefix, counter))
            #expect(id.utf8.count == prefix.utf8.count + String(counter, radix: 16).utf8.count)
        }
    }

    @Test("a sequence counts up from 1, each id distinct")
    func counts() {
        var sequence = RequestIDSequence(prefix: "7-")
        let ids = (1...300).map { _ in sequence.next() }
        #expect(ids == (1...300).map { Self.expected("7-", UInt64($0)) })
        #expect(Set(ids).count == 300)
    }
}
