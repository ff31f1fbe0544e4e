import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Dispatch
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps the account's token cache file in step with the in-memory state (SPEC §7 "Persistence").
///
/// Writes happen on one serial queue, never on an event loop (a token can be dropped from inside the data plane)
/// and never concurrently; each is a locked read-modify-write through ``TokenStore``. ``reloadIfChanged(tokens:session:)``
/// notices a write by another process — `login` or `logout` in another terminal — and takes it over, by
/// ``SessionAdoption``'s rule. A write that fails is not only logged: what it carried stays in memory, counted as
/// unsaved, and ``saveUnsavedChanges(tokens:session:force:)`` writes it again until it lands (docs/operations.md).
public final class TokenPersistence: Sendable {
    public let store: TokenStore
    let flowName: String
    package let logger: Logger
    package let metrics: ProxyMetrics?
    /// The monotonic clock the retries' back-off runs on.
    package let uptime: @Sendable () -> Duration
    let queue = DispatchQueue(label: "bearer-proxy.token-file")
    /// The file's signature after our last read or write; a different one means someone else wrote.
    private let lastSeen = Mutex<FileSignature?>(nil)
    /// Changes held back while ``inOneWrite(_:)`` runs; nil when writes go straight to the queue.
    private let held = Mutex<HeldWrites?>(nil)
    /// Writes that failed and have not been made good; nil when the file holds everything memory asked it to.
    package let unsaved = Mutex<UnsavedChanges?>(nil)

    private struct HeldWrites {
        var changes: [Change] = []
        /// The session whose write is held (a sign-in): its refresh token is then this process's alone.
        var session: AccountSession?
    }

    /// One edit of the file's account; setting it to nil deletes the file.
    typealias Change = @Sendable (inout PersistedAccount?) -> Void

    /// What ``load()`` found.
    public struct Loaded: Sendable {
        public var tokens: [AccessToken]
        package var stored: StoredSession
        /// For the user: a corrupt file that was set aside, or a file that could not be read.
        public var notice: String?

        /// The file's account; empty when there is none (or it could not be read).
        public var session: AccountSession.Snapshot {
            guard case .account(let snapshot, _) = stored else { return AccountSession.Snapshot() }
            return snapshot
        }

        /// The file's refresh-token generation (0 when it has none).
        package var generation: Int {
            guard case .account(_, let generation) = stored else { return 0 }
            return generation
        }

        package init(tokens: [AccessToken], stored: StoredSession, notice: String? = nil) {
            self.tokens = tokens
            self.stored = stored
            self.notice = notice
        }
    }

    public init(
        store: TokenStore, flowName: String, logger: Logger, metrics: ProxyMetrics? = nil,
        uptime: @escaping @Sendable () -> Duration = TokenCache.systemUptime
    ) {
        self.store = store
        self.flowName = flowName
        self.logger = logger
        self.metrics = metrics
        self.uptime = uptime
    }

    /// What the file holds now, for start-up and the poll. A corrupt file has been set aside; the notice says where.
    public func load() -> Loaded {
        do {
            let loaded = try store.load()
            lastSeen.withLock { $0 = store.signature() }
            switch loaded {
            case .empty:
                return Loaded(tokens: [], stored: .noFile)
            case .loaded(let account):
                return Loaded(tokens: account.accessTokens.map(Self.accessToken), stored: StoredSession(account))
            case .setAside(let original, let movedTo, let reason):
                return Loaded(
                    tokens: [], stored: .setAside,
                    notice: "the token cache \(original) was unreadable (\(reason)); it was kept as \(movedTo) and a "
                        + "fresh one started")
            }
        } catch {
            return Loaded(tokens: [], stored: .unreadable, notice: "cannot read the token cache: \(error)")
        }
    }

    /// Makes `change` to the file's access tokens (asynchronously, in order), keeping the tokens other processes
    /// stored for other scope sets.
    public func save(_ change: TokenCacheChange) {
        // What came from the file is already in it; what an upstream answered changes no token kept here.
        guard change.isLocal else { return }
        switch change {
        case .insufficientScope, .answered: return
        case .stored, .rejected, .replacedAll: break
        }
        updateAccount { account in
            switch change {
            case .stored(let token): Self.merge(token, into: &account)
            case .rejected(let value): account.accessTokens.removeAll { $0.value == value }
            case .replacedAll(let tokens, _): account.accessTokens = tokens.map(Self.persisted)
            case .insufficientScope, .answered: break
            }
        }
    }

    /// Has `session` written — as it is when the write runs, so a write retried or held back never puts an older
    /// state over a newer one. An empty session (sign-out) deletes the file.
    public func saveSession(of session: AccountSession) {
        let isHeld = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.session = session
            return true
        }
        if !isHeld { enqueue([], session: session) }
    }

    /// Runs `body` and makes the changes it asks for in one write at its end, thrown or not — so that another
    /// process polling the file (a running `serve`) sees the state before or after, never half of it: a fresh
    /// sign-in without the routes' tokens that `login` is still fetching would make it fetch its own.
    public func inOneWrite<T>(_ body: () async throws -> T) async rethrows -> T {
        let outermost = held.withLock { held -> Bool in
            guard held == nil else { return false }
            held = HeldWrites()
            return true
        }
        guard outermost else { return try await body() }
        defer {
            let writes = held.withLock { held -> HeldWrites? in
                defer { held = nil }
                return held
            }
            if let writes, !writes.changes.isEmpty || writes.session != nil {
                enqueue(writes.changes, session: writes.session)
            }
        }
        return try await body()
    }

    /// Whether ``inOneWrite(_:)`` is holding back a change of the account itself — a `login` between its sign-in
    /// and its write: the new refresh token is then this process's alone, and the file still holds the previous
    /// account. (A `login` that signs nobody in, as for the `refresh-token` flow, holds only tokens back.)
    var isHoldingSession: Bool { held.withLock { $0?.session != nil } }

    /// Waits until every write asked for so far has been tried (before a CLI command exits).
    public func flush() {
        queue.sync {}
    }

    /// Notes the file's signature after a write of this process, when `before` — its signature just before the
    /// write — is the one last seen: only then does the file hold nothing this process has not taken over.
    func recordOwnWrite(ifUnchangedSince before: FileSignature?) {
        let after = store.signature()
        lastSeen.withLock { seen in
            if seen == before { seen = after }
        }
    }

    /// Takes over the file if another process changed it since our last read or write — unless
    /// ``SessionAdoption`` says memory's account is the newer one (a rotated refresh token not yet written).
    public func reloadIfChanged(tokens: TokenCache, session: AccountSession) {
        // On the writes' queue, the decision included: between one of our own writes and the recording of its
        // signature, the file would look changed by someone else, and reading it then could take over a state older
        // than memory's (a sign-in whose session write is still queued read back as "signed out").
        queue.sync {
            guard store.signature() != lastSeen.withLock({ $0 }) else { return }
            let loaded = load()
            if let notice = loaded.notice { logger.warning("\(notice)") }
            let before = session.snapshot
            let decision = session.reconcile(with: loaded.stored)
            switch decision {
            case .keep where session.isUnsaved:
                // The file is older than memory's refresh token, which is being written again; its tokens came
                // from that older state and would only push memory's newer ones out.
                logger.warning(
                    "token cache changed on disk, but this process holds a newer refresh token not yet saved there; keeping it"
                )
                return
            case .keep where loaded.stored == .unreadable:
                return
            case .keep where loaded.stored == .setAside:
                // A corrupt file is no sign-out: memory's account, which was good a second ago, goes to a fresh
                // file (it was set aside with its contents, for whoever wants to look).
                if session.isSignedIn {
                    logger.warning("the token cache was unusable and set aside; writing this process's sign-in again")
                    saveSession(of: session)
                }
                return
            case .keep, .same, .adopt:
                break
            }
            // A new sign-in, a sign-out or a rotated refresh token elsewhere: the credential changed, so failures
            // and back-offs that came from the old one no longer apply. Otherwise only tokens changed (another
            // process stored some), and this process's back-offs stay.
            let sameCredential = session.snapshot == before
            tokens.replaceTokens(with: loaded.tokens, because: .changedElsewhere(sameCredential: sameCredential))
            logger.info(
                "token cache changed on disk; reloaded",
                metadata: ["signed-in": "\(session.isSignedIn)"])
        }
    }

    /// Edits the account in the file, starting a new one when there is none.
    private func updateAccount(_ change: @escaping @Sendable (inout PersistedAccount) -> Void) {
        let flowName = flowName
        write { stored in
            let before = stored ?? PersistedAccount(flow: flowName, updatedAt: Date())
            var account = before
            change(&account)
            // An edit that changes nothing writes nothing (TokenStore.update), so the other processes polling the
            // file do not reload it for nothing.
            if account != before || stored == nil { account.updatedAt = Date() }
            stored = account
        }
    }

    private func write(_ change: @escaping Change) {
        let isHeld = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.changes.append(change)
            return true
        }
        if !isHeld { enqueue([change], session: nil) }
    }

    /// Applies `changes` and then writes `session` (when given) under one lock of the file, on the writes' queue.
    private func enqueue(_ changes: [Change], session: AccountSession?) {
        queue.async { [self] in
            commit(changes, session: session)
        }
    }

    /// On the writes' queue: applies `changes`, then puts `session` as it is now, in one locked read-modify-write.
    /// A failure leaves the session unsaved and is recorded for the retry, `status` and the metrics.
    func commit(_ changes: [Change], session: AccountSession?) {
        let flowName = flowName
        var written: (snapshot: AccountSession.Snapshot, generation: Int)?
        do {
            let before = store.signature()
            try store.update { stored in
                for change in changes { change(&stored) }
                if let record = session?.record {
                    written = (record.snapshot, Self.put(record, into: &stored, flowName: flowName))
                }
            }
            // Not unconditionally: what another process wrote since the last poll is merged into this write, and
            // the poll must still take it over (its rotated refresh token, its tokens).
            recordOwnWrite(ifUnchangedSince: before)
        } catch {
            failedToWrite(error, session: session)
            return
        }
        if let session, let written { session.saved(written.snapshot, generation: written.generation) }
        wrote(everything: false)
    }
}
