#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A sign-in that `serve` opened with one authorization server and that was declined or not finished (SPEC §6.3): until
/// ``until``, no `serve` on this machine opens another one with that server, for any route. Kept in the state
/// directory, so a second `serve` — and the next one started — sees it too. Only the issuer and a time: nothing secret.
struct PersistedDeclinedSignIn: Sendable, Equatable, Codable {
    package var issuer: String
    /// Wall-clock time, as written by whoever noted the decline.
    package var until: Date

    init(issuer: String, until: Date) {
        self.issuer = issuer
        self.until = until
    }

    /// When the back-off ends, seen at `now`; nil once it has. Never later than `longest` from `now`: a record
    /// written before the clock was set back, or by someone else, cannot hold the server back for longer.
    package func ends(at now: Date, longest: TimeInterval) -> Date? {
        guard until > now else { return nil }
        return min(until, now.addingTimeInterval(longest))
    }
}
