import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the token cache file writes dates: ISO 8601 in UTC with exactly three fractional digits
/// (`2025-11-22T05:39:00.123Z`), readable by a person inspecting the file and by any JSON tool.
///
/// Dates are kept to the millisecond. Both directions go through an integer count of milliseconds, so a date read
/// back is bit-for-bit the ``quantized(_:)`` date that was written — which lets ``TokenStore/update(_:)`` return
/// exactly what a later ``TokenStore/load()`` will see.
enum TokenFileDate {
    /// The range written: 0001-01-01 to 9999-12-31, as milliseconds since 1970. `Date.distantFuture` (year 4001)
    /// fits; anything further is clamped rather than trapping in the integer conversion.
    static let millisecondRange: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date` rounded to the nearest millisecond, as the file stores it.
    static func quantized(_ date: Date) -> Date {
        makeDate(milliseconds: milliseconds(date))
    }

    /// The text written for `date`.
    package static func string(from date: Date) -> String {
        let total = milliseconds(date)
        // Floor division, so dates before 1970 get a non-negative millisecond part.
        let seconds = total >= 0 ? total / 1000 : -((-total + 999) / 1000)
        let millis = Int(total - seconds * 1000)
        // Formatting a whole second cannot round the wrong way; the milliseconds are then appended exactly.
        let whole = Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
        let fraction = String(millis)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    /// The date `text` names, or nil when it is not an ISO 8601 UTC date (with or without fractional seconds).
    static func date(from text: String) -> Date? {
        let parsed =
            (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
        return parsed.map(quantized)
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value > 0 ? millisecondRange.upperBound : millisecondRange.lowerBound }
        let lower = Double(millisecondRange.lowerBound)
        let upper = Double(millisecondRange.upperBound)
        return Int64(min(max(value, lower), upper))
    }

    private static func makeDate(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
