import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What keeps `serve` from opening tab after tab with one authorization server (`"signIn": "auto"` and
/// `"stepUp": "auto"`, SPEC §6.3): once a sign-in it opened there was declined or not finished, no `serve` on this
/// machine opens another one with that server, for any route, for ``length``. The decline is kept in the state
/// directory (``DiscoveredSignInStore/noteDeclined(issuer:until:)``), so a second `serve` waiting on the server's lock
/// sees it too; a person's `login ROUTE` is never held back by it, and any sign-in there that succeeds forgets it.
package struct SignInBackOff: Sendable {
    package let store: DiscoveredSignInStore
    let length: TimeInterval
    /// Wall clock: the file outlives the process, so no monotonic clock would do; ``until(issuer:)`` bounds what a
    /// clock set back can do.
    package let now: @Sendable () -> Date

    package init(store: DiscoveredSignInStore, length: TimeInterval, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.length = length
        self.now = now
    }

    /// Until when `serve` opens no sign-in with `issuer`; nil: it may. Never later than ``length`` from now; a file
    /// that cannot be read counts as no decline (a corrupt one has been set aside).
    package func until(issuer: String) -> Date? {
        try? store.declinedUntil(issuer: issuer, now: now(), longest: length)
    }

    /// Notes that the sign-in `serve` opened with `issuer` was declined or not finished.
    func declined(issuer: String) throws(StateError) {
        try store.noteDeclined(issuer: issuer, until: now().addingTimeInterval(length))
    }

    /// The reason a decline noted with `issuer` gives.
    package static func reason(issuer: String) -> String {
        "the last sign-in serve opened with \(issuer) was declined or not finished"
    }

    /// Why `serve` opens no sign-in until `until`, for the `401` and the log: `reason`, and for how long.
    package static func explanation(_ reason: String, until: Date, now: Date) -> String {
        let seconds = Int(until.timeIntervalSince(now).rounded(.up))
        return reason + ", so serve opens none for \(seconds) s"
    }
}
