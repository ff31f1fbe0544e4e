#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The declined sign-ins `serve` opened: `discovered-declined-<h>.json` per authorization server, `<h>` hashed from its
/// issuer as the store's other names are. Written by the sign-in that holds the server's lock
/// (``signInLockName(issuer:)``); a file that does not decode is set aside and counts as none.
extension DiscoveredSignInStore {
    /// Until when `serve` opens no sign-in with `issuer`, seen at `now`; nil: it may. One that lies further ahead than
    /// `longest` is cut to `now + longest`, in the file too, so that it ends then.
    package func declinedUntil(issuer: String, now: Date, longest: TimeInterval) throws(StateError) -> Date? {
        let file = declinedFile(issuer)
        guard let stored = try file.load(), stored.issuer == issuer,
            let ends = stored.ends(at: now, longest: longest)
        else { return nil }
        if ends < stored.until {
            // Only the record read: a decline noted or cleared meanwhile is left as it is.
            try file.update { value in
                if value == stored { value?.until = ends }
            }
        }
        return ends
    }

    /// Notes that the sign-in with `issuer` that `serve` opened was declined or not finished.
    package func noteDeclined(issuer: String, until: Date) throws(StateError) {
        try declinedFile(issuer).update { $0 = PersistedDeclinedSignIn(issuer: issuer, until: until) }
    }

    /// Forgets the decline at `issuer`: a sign-in with it succeeded.
    package func clearDeclined(issuer: String) throws(StateError) {
        try declinedFile(issuer).update { value in
            if value?.issuer == issuer { value = nil }
        }
    }

    private func declinedFile(_ issuer: String) -> StateFile<PersistedDeclinedSignIn> {
        StateFile(directory: directory, name: "discovered-declined-\(Self.hash(["declined", issuer])).json")
    }
}
