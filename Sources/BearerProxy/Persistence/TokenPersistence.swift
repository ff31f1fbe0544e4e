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
/// notices a write by another process — `login` or `logout` in another terminal — and takes it over.
public final class TokenPersistence: Sendable {
    public let store: TokenStore
    let flowName: String
    let logger: Logger
    let queue = DispatchQueue(label: "bearer-proxy.token-file")
    /// The file's signature after our last read or write; a different one means someone else wrote.
    private let lastSeen = Mutex<FileSignature?>(nil)
    /// Changes held back while ``inOneWrite(_:)`` runs; nil when writes go straight to the queue.
    private let held = Mutex<HeldWrites?>(nil)

    private struct HeldWrites {
        var changes: [Change] = []
        /// Whether the account itself changed (a sign-in): its refresh token is then this process's alone.
        var includesSession = false
    }

    /// One edit of the file's account; setting it to nil deletes the file.
    private typealias Change = @Sendable (inout PersistedAccount?) -> Void

    public init(store: TokenStore, flowName: String, logger: Logger) {
        self.store = store
        self.flowName = flowName
        self.logger = logger
    }

    /// What the file holds now, for start-up. A corrupt file has been set aside; the notice says where.
    public func load() -> (tokens: [AccessToken], session: AccountSession.Snapshot, notice: String?) {
        do {
            let loaded = try store.load()
            lastSeen.withLock { $0 = store.signature() }
            switch loaded {
            case .empty:
                return ([], AccountSession.Snapshot(), nil)
            case .loaded(let account):
                return (account.accessTokens.map(Self.accessToken), Self.snapshot(of: account), nil)
            case .setAside(let original, let movedTo, let reason):
                return (
                    [], AccountSession.Snapshot(),
                    "the token cache \(original) was unreadable (\(reason)); it was kept as \(movedTo) and a fresh "
                        + "one started"
                )
            }
        } catch {
            return ([], AccountSession.Snapshot(), "cannot read the token cache: \(error)")
        }
    }

    /// Makes `change` to the file's access tokens (asynchronously, in order), keeping the tokens other processes
    /// stored for other scope sets.
    public func save(_ change: TokenCacheChange) {
        // What came from the file is already in it.
        guard change.isLocal else { return }
        updateAccount { account in
            switch change {
            case .stored(let token): Self.merge(token, into: &account)
            case .rejected(let value): account.accessTokens.removeAll { $0.value == value }
            case .replacedAll(let tokens, _): account.accessTokens = tokens.map(Self.persisted)
            }
        }
    }

    /// Records the account's identity and refresh token; an empty snapshot (sign-out) deletes the file.
    public func saveSession(_ snapshot: AccountSession.Snapshot) {
        if snapshot == AccountSession.Snapshot() {
            write(session: true) { stored in stored = nil }
            return
        }
        updateAccount(session: true) { account in
            account.refreshToken = snapshot.refreshToken
            account.identity = snapshot.identity
        }
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
            let changes = held.withLock { held -> [Change] in
                defer { held = nil }
                return held?.changes ?? []
            }
            if !changes.isEmpty { enqueue(changes) }
        }
        return try await body()
    }

    /// Whether ``inOneWrite(_:)`` is holding back a change of the account itself — a `login` between its sign-in
    /// and its write: the new refresh token is then this process's alone, and the file still holds the previous
    /// account. (A `login` that signs nobody in, as for the `refresh-token` flow, holds only tokens back.)
    var isHoldingSession: Bool { held.withLock { $0?.includesSession ?? false } }

    /// Waits until every write asked for so far is on disk (before a CLI command exits).
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

    /// Takes over the file if another process changed it since our last read or write.
    public func reloadIfChanged(tokens: TokenCache, session: AccountSession) {
        // On the writes' queue: between one of our own writes and the recording of its signature, the file would
        // look changed by someone else, and reading it then could take over a state older than memory's (a
        // sign-in whose session write is still queued read back as "signed out").
        let changed = queue.sync { () -> (tokens: [AccessToken], session: AccountSession.Snapshot, notice: String?)? in
            guard store.signature() != lastSeen.withLock({ $0 }) else { return nil }
            return load()
        }
        guard let (loaded, snapshot, notice) = changed else { return }
        if let notice { logger.warning("\(notice)") }
        // A new sign-in, a sign-out or a rotated refresh token elsewhere: the credential changed, so failures and
        // back-offs that came from the old one no longer apply. Otherwise only tokens changed (another process
        // stored some), and this process's back-offs stay.
        let sameCredential = session.snapshot == snapshot
        session.adopt(snapshot)
        tokens.replaceTokens(with: loaded, because: .changedElsewhere(sameCredential: sameCredential))
        logger.info(
            "token cache changed on disk; reloaded",
            metadata: ["signed-in": "\(snapshot.refreshToken != nil || snapshot.identity != nil)"])
    }

    /// Edits the account in the file, starting a new one when there is none.
    private func updateAccount(
        session: Bool = false, _ change: @escaping @Sendable (inout PersistedAccount) -> Void
    ) {
        let flowName = flowName
        write(session: session) { stored in
            let before = stored ?? PersistedAccount(flow: flowName, updatedAt: Date())
            var account = before
            change(&account)
            // An edit that changes nothing writes nothing (TokenStore.update), so the other processes polling the
            // file do not reload it for nothing.
            if account != before || stored == nil { account.updatedAt = Date() }
            stored = account
        }
    }

    private func write(session: Bool = false, _ change: @escaping Change) {
        let isHeld = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held?.changes.append(change)
            if session { held?.includesSession = true }
            return true
        }
        if !isHeld { enqueue([change]) }
    }

    /// Applies `changes` in order under one lock of the file, on the writes' queue.
    private func enqueue(_ changes: [Change]) {
        queue.async { [self] in
            do {
                let before = store.signature()
                try store.update { stored in
                    for change in changes { change(&stored) }
                }
                // Not unconditionally: what another process wrote since the last poll is merged into this write,
                // and the poll must still take it over (its rotated refresh token, its tokens).
                recordOwnWrite(ifUnchangedSince: before)
            } catch {
                logger.error("cannot write the token cache \(store.path): \(error)")
            }
        }
    }
}
