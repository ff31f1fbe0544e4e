import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes to the token cache file that failed and have not been made good yet (docs/operations.md): when it started,
/// how often and why it failed, and when to try again. `status`, `/-/status` and the metrics show it; never a token.
public struct UnsavedChanges: Sendable, Equatable {
    /// When the first of these writes failed, on the wall clock — for people to read.
    public var since: Date
    /// The same moment on the monotonic clock, for durations (a wall clock that steps must not distort them).
    var sinceUptime: Duration
    /// Writes that failed since then, the retries included.
    public var failedWrites: Int
    /// Why the last one failed: the path and the system's reason (`No space left on device`), never a token.
    public var lastError: String
    /// Whether the sign-in itself (the refresh token) is among the unsaved changes — it is lost if the process
    /// ends before a write succeeds. Filled in when reported.
    public var includesSignIn = false
    /// How long the changes have been unsaved. Filled in when reported.
    public var duration: Duration = .zero
    /// When the retry may run, on the monotonic clock.
    package var nextAttempt: Duration
    /// Retries that failed in a row: they alone lengthen the wait (every request's token write failing too must not
    /// push the retry half a minute away).
    var failedRetries = 0

    /// The first retry comes this long after a failure; each failed retry doubles the wait up to
    /// ``longestRetryDelay``. A full disk or a read-only directory is seldom fixed within a second, and a write
    /// every second would fill the log; half a minute keeps the sign-in at risk only briefly once it is fixed.
    static let firstRetryDelay: Duration = .seconds(1)
    static let longestRetryDelay: Duration = .seconds(30)

    /// The state after a first failure at `uptime`.
    package init(firstFailure error: String, at uptime: Duration, on date: Date) {
        since = date
        sinceUptime = uptime
        failedWrites = 1
        lastError = error
        nextAttempt = uptime + Self.firstRetryDelay
    }

    /// One more failed write at `uptime`; when it was the `retry`, the wait before the next one doubles.
    package mutating func failedAgain(_ error: String, at uptime: Duration, retry: Bool) {
        failedWrites += 1
        lastError = error
        guard retry else { return }
        failedRetries += 1
        nextAttempt = uptime + Self.retryDelay(afterFailures: failedRetries + 1)
    }

    /// The wait after `failures` failed writes: 1 s, 2 s, 4 s, … 30 s.
    package static func retryDelay(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures - 1, 0), 5)
        return min(firstRetryDelay * (1 << doublings), longestRetryDelay)
    }
}
