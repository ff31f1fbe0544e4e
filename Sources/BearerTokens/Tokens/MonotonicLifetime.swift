import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A cached token's expiry and refresh time carried over to the monotonic clock when it entered the cache.
///
/// The provider states a token's life in wall time (`expires_in` from its answer, `exp` in a JWT, the times in the
/// token cache file), so the cache compares `expiresOn` with the wall clock — and also with these: a wall clock that
/// steps back an hour would otherwise keep an expired token in use, and skip its refresh, for an hour. A token is
/// sent only while both clocks say it has life left; it is due for refresh when either says so. A clock stepped
/// forward costs one early refresh (the new token's times are in the new wall time), never a storm.
struct MonotonicLifetime: Sendable, Equatable {
    /// When the token expires, on the cache's monotonic clock.
    let expiresAt: Duration
    /// When the token is due for refresh, on the cache's monotonic clock.
    let refreshAt: Duration

    /// `token`'s times as seen at wall time `now`, monotonic time `uptime`.
    init(_ token: AccessToken, now: Date, uptime: Duration) {
        expiresAt = uptime + Self.duration(token.expiresOn.timeIntervalSince(now))
        refreshAt = uptime + Self.duration(token.refreshOn.timeIntervalSince(now))
    }

    /// Seconds of life left at monotonic time `uptime` (negative once expired).
    func remaining(at uptime: Duration) -> TimeInterval {
        (expiresAt - uptime) / .seconds(1)
    }

    /// A wall-clock interval as a duration, bounded to ±100 years so that no stored time (a static token valid until
    /// 2100, a provider's absurd `expires_in`) reaches a trapping conversion.
    private static func duration(_ interval: TimeInterval) -> Duration {
        let bound: TimeInterval = 100 * 365 * 86_400
        guard interval.isFinite else { return interval > 0 ? .seconds(bound) : .seconds(-bound) }
        return .seconds(min(max(interval, -bound), bound))
    }
}
