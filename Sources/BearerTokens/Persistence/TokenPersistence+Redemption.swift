import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a redemption under the ``RedemptionLock`` reads and writes. Both run on the writes' queue — never on an
/// event loop or a cooperative thread, since the directory's lock may make them wait for another process's write —
/// and after every write this process has queued, so the file read is never older than this process's own state.
extension TokenPersistence {
    /// The account in the file now (nil when there is none or it cannot be used: an unusable file is set aside and
    /// reported, as at start-up), and what it says for ``SessionAdoption`` — where a file that could not be read
    /// at all is not mistaken for a sign-out.
    func storedAccount() async -> (account: PersistedAccount?, session: StoredSession) {
        await onQueue { [self] in
            do {
                switch try store.load() {
                case .loaded(let account):
                    return (account, StoredSession(account))
                case .setAside(let original, let movedTo, let reason):
                    logger.warning(
                        "the token cache \(original) was unreadable (\(reason)); it was kept as \(movedTo) and a fresh one started"
                    )
                    return (nil, .setAside)
                case .empty:
                    return (nil, .noFile)
                }
            } catch {
                logger.warning("cannot read the token cache: \(error)")
                return (nil, .unreadable)
            }
        }
    }

    /// Writes a redemption's outcome before the lock is let go: `session` as it now is — the refresh token to use
    /// from now on (rotated or not) and the identity — and the new access token. The next process to take the lock
    /// must find them, or it would redeem a refresh token the provider has already retired. If the write fails the
    /// session stays unsaved, and authoritative, until the retry writes it.
    func recordRedemption(of session: AccountSession, token: AccessToken) async {
        let flowName = flowName
        await onQueue { [self] in
            commit(
                [
                    { stored in
                        var account = stored ?? PersistedAccount(flow: flowName, updatedAt: Date())
                        let before = account
                        Self.merge(token, into: &account)
                        if account != before || stored == nil { account.updatedAt = Date() }
                        stored = account
                    }
                ], session: session)
        }
    }

    func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
