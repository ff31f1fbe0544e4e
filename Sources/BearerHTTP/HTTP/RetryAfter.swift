import BearerJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `Retry-After` from an identity provider (RFC 9110 §10.2.3), read without trusting it: the number of seconds to
/// wait, within ``range``, or nil when the value is neither form, and the caller's own back-off applies.
///
/// Both forms are read — delta-seconds (`1*DIGIT`) and an HTTP-date (IMF-fixdate, and the obsolete RFC 850 and
/// asctime forms a recipient must accept, §5.6.7) — and the result is clamped: a provider that says `0` or a date
/// in the past waits 1 s, and one that says `9223372036854775807`, or a date years away, waits an hour and is then
/// asked again. No digit string, however long, reaches an integer conversion that could trap: a value too long to be a
/// sane number of seconds is the upper bound.
package enum RetryAfter {
    /// The waits the proxy honours, in seconds: at least 1 (never "now", which would make a retry loop), at most
    /// an hour (a provider is asked again then; a longer outage just answers again).
    static let range = 1...3600

    /// The seconds `value` asks to wait, clamped to ``range``, measuring an HTTP-date from `now`; nil when `value`
    /// is absent or not a `Retry-After` value (`-5`, `1e9`, `soon`).
    package static func seconds(_ value: String?, now: Date = Date()) -> Int? {
        guard let text = value.map({ Substring($0).trimmingOWS() }), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Ten digits are more than the upper bound already; only shorter strings are converted.
            guard text.utf8.count <= 9, let delta = Int(text) else { return range.upperBound }
            return Int(seconds: Double(delta), rounded: .towardZero, clampedTo: range)
        }
        guard let date = httpDate(String(text), now: now) else { return nil }
        let delta = date.timeIntervalSince(now)
        guard delta.isFinite else { return nil }
        return Int(seconds: delta, rounded: .up, clampedTo: range)
    }

    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// An HTTP-date in one of the three forms of RFC 9110 §5.6.7, or nil when `text` is none of them in full:
    /// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, asctime
    /// `Sun Nov  6 08:49:37 1994`. (The C library's `strptime` would do it, but Swift's Glibc module does not
    /// export it; `timegm` does the calendar.)
    static func httpDate(_ text: String, now: Date = Date()) -> Date? {
        let fields = text.split(separator: " ")
        var day: Substring
        var month: Substring
        var year: Int
        let time: Substring
        switch fields.count {
        case 6 where fields[5] == "GMT" && fields[0].hasSuffix(","):
            guard dayNames.contains(String(fields[0].dropLast())), fields[3].count == 4, let full = number(fields[3])
            else { return nil }
            (day, month, year, time) = (fields[1], fields[2], full, fields[4])
        case 4 where fields[3] == "GMT" && fields[0].hasSuffix(","):
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            guard longDayNames.contains(String(fields[0].dropLast())), parts.count == 3, parts[2].count == 2,
                let short = number(parts[2])
            else { return nil }
            // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the most recent such year in the past.
            var clock = time_t(now.timeIntervalSince1970)
            var today = tm()
            gmtime_r(&clock, &today)
            let thisYear = Int(today.tm_year) + 1900
            year = 2000 + short > thisYear + 50 ? 1900 + short : 2000 + short
            (day, month, time) = (parts[0], parts[1], fields[2])
        case 5:
            guard dayNames.contains(String(fields[0])), fields[4].count == 4, let full = number(fields[4]) else {
                return nil
            }
            (day, month, year, time) = (fields[2], fields[1], full, fields[3])
        default:
            return nil
        }
        let hms = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(day.count), let dayOfMonth = number(day), (1...31).contains(dayOfMonth),
            let monthIndex = monthNames.firstIndex(of: String(month)), hms.count == 3,
            hms.allSatisfy({ $0.count == 2 }), let hour = number(hms[0]), let minute = number(hms[1]),
            let second = number(hms[2]), hour < 24, minute < 60, second <= 60
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(monthIndex)
        parts.tm_mday = Int32(dayOfMonth)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        guard seconds != -1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A short run of ASCII digits as a number (at most four: a year).
    private static func number(_ text: Substring) -> Int? {
        guard (1...4).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}
