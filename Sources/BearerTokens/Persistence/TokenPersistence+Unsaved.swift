import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A write of the token cache file that fails — disk full, a read-only directory, no descriptor left — is kept, not
/// dropped (docs/operations.md): memory keeps what it carried (above all a rotated refresh token, which the provider
/// has already made the only one that works), ``saveUnsavedChanges(tokens:session:force:)`` writes it again with a
/// back-off until it lands, and `status` and the metrics say so meanwhile.
extension TokenPersistence {
    /// The unsaved changes, for `status` and `/-/status`; nil when the file holds everything.
    public func unsavedChanges(of session: AccountSession) -> UnsavedChanges? {
        guard var report = unsaved.withLock({ $0 }) else { return nil }
        report.includesSignIn = session.isUnsaved
        report.duration = max(uptime() - report.sinceUptime, .zero)
        return report
    }

    /// Writes again what failed to reach the file, once its back-off has passed (or at once with `force`): memory's
    /// session — unless ``SessionAdoption``, checked under the file's lock, says the file's is the newer one, which
    /// is then taken over instead — and memory's access tokens. Called once a second by ``TokenMaintenance``.
    public func saveUnsavedChanges(tokens: TokenCache, session: AccountSession, force: Bool = false) {
        guard let pending = unsaved.withLock({ $0 }), force || pending.nextAttempt <= uptime() else { return }
        queue.sync { retry(tokens: tokens, session: session) }
    }

    /// Before the process ends (``AccountRuntime/shutdown()``): every queued write tried, then one last try of what
    /// failed. Returns false, after logging why, when the sign-in itself is still not in the file — it is lost.
    @discardableResult
    public func finish(tokens: TokenCache, session: AccountSession) -> Bool {
        flush()
        saveUnsavedChanges(tokens: tokens, session: session, force: true)
        guard session.isUnsaved else { return true }
        let reason = unsaved.withLock { $0?.lastError } ?? "the write did not complete"
        let message =
            "the sign-in could not be saved to the token cache \(store.path) (\(reason)); it is lost when this process "
            + "ends, and the file keeps an older refresh token the identity provider may already have retired: once "
            + "the cause is fixed, run `bearer-proxy login`"
        logger.error("\(message)")
        return false
    }

    /// On the writes' queue: the retry itself.
    private func retry(tokens: TokenCache, session: AccountSession) {
        let flowName = flowName
        let now = Date()
        let memoryTokens = tokens.allTokens.filter { $0.isValid(at: now) }
        var decision = SessionAdoption.keep
        var written: (snapshot: AccountSession.Snapshot, generation: Int)?
        let file: PersistedAccount?
        do {
            let before = store.signature()
            file = try store.update { stored in
                let record = session.record
                decision = SessionAdoption.decide(memory: record, file: StoredSession(stored))
                guard decision != .adopt else { return }
                if record.durability == .unsaved {
                    written = (record.snapshot, Self.put(record, into: &stored, flowName: flowName))
                    // A sign-out deleted the file; memory's tokens must not bring it back.
                    if stored == nil { return }
                }
                guard
                    var account = stored
                        ?? (memoryTokens.isEmpty ? nil : PersistedAccount(flow: flowName, updatedAt: now))
                else { return }
                let merged = account
                for token in memoryTokens { Self.merge(token, into: &account) }
                if account != merged { account.updatedAt = now }
                stored = account
            }
            recordOwnWrite(ifUnchangedSince: before)
        } catch {
            failedToWrite(error, session: session, retry: true)
            return
        }
        if decision == .adopt {
            // A `login` or `logout` elsewhere after our failed write: the person's act wins, and what this process
            // could not write belonged to the account it replaced.
            let stored = StoredSession(file)
            if session.reconcile(with: stored) == .adopt {
                tokens.replaceTokens(
                    with: file?.accessTokens.map(Self.accessToken) ?? [],
                    because: .changedElsewhere(sameCredential: false))
                logger.warning(
                    "the token cache was written by another process (a sign-in or sign-out) after this process's write failed; taking it over"
                )
            }
        } else if let written {
            session.saved(written.snapshot, generation: written.generation)
        }
        wrote(everything: true)
    }

    /// Records a failed write: counted, logged, and retried after the back-off.
    func failedToWrite(_ error: any Error, session: AccountSession?, retry: Bool = false) {
        let now = uptime()
        let first = unsaved.withLock { unsaved -> Bool in
            guard unsaved != nil else {
                unsaved = UnsavedChanges(firstFailure: "\(error)", at: now, on: Date())
                return true
            }
            unsaved?.failedAgain("\(error)", at: now, retry: retry)
            return false
        }
        metrics?.tokenCacheWriteFailed()
        if first { metrics?.tokenCacheUnsaved(true) }
        let signIn =
            session?.isUnsaved == true
            ? "; the refresh token in memory stays the one in use and is written again until it is saved" : ""
        logger.error("cannot write the token cache \(store.path): \(error)\(signIn)")
    }

    /// Records a write that succeeded. `everything`: it wrote all memory holds (a retry), so nothing is unsaved any
    /// more; otherwise it shows the file can be written again, and the retry is brought forward to the next round.
    func wrote(everything: Bool) {
        let now = uptime()
        let recovered = unsaved.withLock { unsaved -> Bool in
            guard unsaved != nil else { return false }
            if everything {
                unsaved = nil
                return true
            }
            unsaved?.nextAttempt = now
            return false
        }
        guard recovered else { return }
        metrics?.tokenCacheUnsaved(false)
        logger.notice("the token cache \(store.path) is written again; nothing in memory is unsaved")
    }
}
