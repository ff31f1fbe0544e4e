#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a redemption under the ``RedemptionLock`` reads and writes. Both run on the writes' queue — never on an
/// event loop or a cooperative thread, since the directory's lock may make them wait for another process's write —
/// and after every write this process has queued, so the file read is never older than this process's own state.
extension TokenPersistence {
    /// The account in the file now, or nil when there is none or it cannot be used (an unusable file is set aside
    /// and reported, as at start-up: there is nothing to take over).
    func storedAccount() async -> PersistedAccount? {
        await onQueue { [self] in
            switch try? store.load() {
            case .loaded(let account)?:
                return account
            case .setAside(let original, let movedTo, let reason)?:
                logger.warning(
                    "the token cache \(original) was unreadable (\(reason)); it was kept as \(movedTo) and a fresh one started"
                )
                return nil
            case .empty?, nil:
                return nil
            }
        }
    }

    /// Writes a redemption's outcome before the lock is let go: the refresh token to use from now on (rotated or
    /// not), the identity if the provider sent one, and the new access token. The next process to take the lock
    /// must find them, or it would redeem a refresh token the provider has already retired.
    func recordRedemption(refreshToken: String, identity: AccountIdentity?, token: AccessToken) async {
        let flowName = flowName
        await onQueue { [self] in
            do {
                let before = store.signature()
                try store.update { stored in
                    var account = stored ?? PersistedAccount(flow: flowName, updatedAt: Date())
                    account.refreshToken = refreshToken
                    if let identity { account.identity = identity }
                    Self.merge(token, into: &account)
                    account.updatedAt = Date()
                    stored = account
                }
                // When nobody else wrote since this process last took the file over, the file now holds what memory
                // does, and the next poll need not reload it (and reset the cache's back-off). Otherwise it must.
                recordOwnWrite(ifUnchangedSince: before)
            } catch {
                logger.error("cannot write the token cache \(store.path): \(error)")
            }
        }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
