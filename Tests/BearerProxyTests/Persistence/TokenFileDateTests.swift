import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// Dates in the token cache file: ISO 8601 UTC with milliseconds, exact on the way back.
@Suite("Token file dates")
struct TokenFileDateTests {
    @Test(
        "dates are written as ISO 8601 UTC with three fractional digits",
        arguments: [
            (1_763_790_000.123, "2025-11-22T05:40:00.123Z"),
            (1_763_790_000, "2025-11-22T05:40:00.000Z"),
            (1_763_790_000.0004, "2025-11-22T05:40:00.000Z"),
            (1_763_790_000.9996, "2025-11-22T05:40:01.000Z"),
            (0, "1970-01-01T00:00:00.000Z"),
            (-0.25, "1969-12-31T23:59:59.750Z"),
        ])
    func format(seconds: Double, text: String) {
        #expect(TokenFileDate.string(from: Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test("what is written reads back as the quantized date, bit for bit")
    func exactRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        var dates = [
            Date.distantFuture, Date(timeIntervalSince1970: -0.25), Date(timeIntervalSince1970: 4_102_444_800),
        ]
        for _ in 0..<500 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator)))
        }
        for date in dates {
            let read = try #require(TokenFileDate.date(from: TokenFileDate.string(from: date)))
            #expect(read == TokenFileDate.quantized(date), "\(date.timeIntervalSince1970)")
            // Half a millisecond of rounding, plus the Double's own resolution at dates up to 2100 (~0.5 µs).
            #expect(abs(read.timeIntervalSince(date)) <= 0.0005 + 1e-6)
        }
    }

    @Test("dates without fractional seconds are read too (a file edited by hand)")
    func wholeSeconds() {
        #expect(TokenFileDate.date(from: "2025-11-22T05:40:00Z") == Date(timeIntervalSince1970: 1_763_790_000))
        #expect(TokenFileDate.date(from: "tomorrow") == nil)
    }

    @Test("dates far outside 0001...9999 are clamped, not a crash")
    func clamped() {
        #expect(TokenFileDate.string(from: Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(TokenFileDate.string(from: Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999Z")
    }
}
