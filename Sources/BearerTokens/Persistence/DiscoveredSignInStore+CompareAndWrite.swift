/// A write of a sign-in by a process that redeemed its refresh token: it lands only while the file still holds the
/// refresh token that was redeemed. Whatever replaced it meanwhile — a `login ROUTE` (a step-up's wider grant), a
/// `logout ROUTE` — was written by a person's command after the redemption began, is newer, and stands.
extension DiscoveredSignInStore {
    /// What ``replaceSignIn(_:with:ifStillHolding:)`` found.
    package enum SignInWrite: Sendable, Equatable {
        /// The file held the redeemed refresh token; it holds the new sign-in now.
        case written
        /// The file held something else (nil: no sign-in), which it keeps.
        case replacedMeanwhile(PersistedDiscoveredSignIn?)
    }

    /// Writes `record` as the sign-in under `key`, under the directory's lock, only if the file still holds one of
    /// `redeemed` as its refresh token (the one the writer read, or — for a process that held a newer one unsaved —
    /// that one, which its own retry may have written meanwhile).
    package func replaceSignIn(
        _ key: DiscoveredSignInKey, with record: PersistedDiscoveredSignIn, ifStillHolding redeemed: [String?]
    ) throws(StateError) -> SignInWrite {
        try updateSignIn(key) { stored -> SignInWrite in
            guard let current = stored, redeemed.contains(current.refreshToken) else {
                return .replacedMeanwhile(stored)
            }
            // What else changed meanwhile (a step-up noted by another process) is kept only if the record says
            // nothing of it.
            var written = record
            if written.stepUpScopes == nil { written.stepUpScopes = current.stepUpScopes }
            stored = written
            return .written
        }
    }
}
