import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Synchronization

/// The signed-in account: who it is and its refresh token. The one owner of both; every change it makes is
/// reported (to the token cache file), and what another process wrote is taken over through ``reconcile(with:)``,
/// which applies ``SessionAdoption`` in the same critical section as the change it makes.
///
/// Besides the account it keeps what the token cache file knows of it (docs/operations.md, "A token cache that cannot
/// be written"): the generation of its refresh token and whether the file holds it. A rotated token whose write failed
/// stays here, authoritative, until a write succeeds — the file's older one must not replace it.
public final class AccountSession: Sendable {
    /// The account's state at one moment.
    public struct Snapshot: Sendable, Equatable {
        public var refreshToken: String?
        public var identity: AccountIdentity?

        public init(refreshToken: String? = nil, identity: AccountIdentity? = nil) {
            self.refreshToken = refreshToken
            self.identity = identity
        }
    }

    /// Whether the token cache file holds the account in memory.
    public enum Durability: Sendable, Equatable {
        /// It came from the configuration or the environment (a refresh token in a variable, a flow's own
        /// identity) and was never written: the file's absence says nothing about it.
        case configured
        /// The file is known to hold it: it was read from there, or written there.
        case saved
        /// It changed here and the write is pending or failed: until a write succeeds, it exists only in memory.
        case unsaved
    }

    /// The account with what the file knows of it.
    package struct Record: Sendable, Equatable {
        var snapshot: Snapshot
        /// The ``PersistedAccount/refreshTokenGeneration`` the refresh token has (saved) or will be written with
        /// (unsaved): one more than the one it replaced.
        package var generation: Int
        var durability: Durability

        init(snapshot: Snapshot, generation: Int, durability: Durability) {
            self.snapshot = snapshot
            self.generation = generation
            self.durability = durability
        }
    }

    private let state: Mutex<Record>
    private let onChange: (@Sendable (AccountSession) -> Void)?

    /// - Parameter onChange: told after each change made here (sign-in, sign-out, a rotation outside the redemption
    ///   lock); it writes the session as it is when the write runs.
    public init(_ snapshot: Snapshot = Snapshot(), onChange: (@Sendable (AccountSession) -> Void)? = nil) {
        state = Mutex(Record(snapshot: snapshot, generation: 0, durability: .configured))
        self.onChange = onChange
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }
    package var record: Record { state.withLock { $0 } }
    public var identity: AccountIdentity? { snapshot.identity }
    package var refreshToken: String? { snapshot.refreshToken }
    public var isSignedIn: Bool { snapshot.refreshToken != nil || snapshot.identity != nil }
    /// Whether the account has changed here without reaching the token cache file yet.
    public var isUnsaved: Bool { state.withLock { $0.durability == .unsaved } }

    /// Records a sign-in, a rotated refresh token (RFC 6749 §6: the new one replaces the old), or a newer identity,
    /// and has it written.
    package func update(refreshToken: String?, identity: AccountIdentity?) {
        if rotated(refreshToken: refreshToken, identity: identity) { onChange?(self) }
    }

    /// ``update(refreshToken:identity:)`` without asking for a write: for a redemption under the ``RedemptionLock``,
    /// which writes the outcome itself before it lets go. Returns whether anything changed.
    @discardableResult
    func rotated(refreshToken: String?, identity: AccountIdentity?) -> Bool {
        state.withLock { state -> Bool in
            var next = state.snapshot
            if let refreshToken { next.refreshToken = refreshToken }
            if let identity { next.identity = identity }
            guard next != state.snapshot else { return false }
            state.changed(to: next)
            return true
        }
    }

    /// Records a new sign-in: the account and its refresh token replace whatever was there (one account per
    /// configuration, as MSAL keeps one per client id).
    package func signedIn(_ account: SignedInAccount) {
        let next = Snapshot(refreshToken: account.refreshToken, identity: account.identity)
        state.withLock { $0.changed(to: next) }
        onChange?(self)
    }

    /// Forgets the account.
    public func signOut() {
        state.withLock { $0.changed(to: Snapshot()) }
        onChange?(self)
    }

    /// Puts the account found at start-up in place, without writing it: `generation` is the file's, and
    /// `durability` says whether the file holds it.
    package func restore(_ snapshot: Snapshot, generation: Int, durability: Durability) {
        state.withLock { $0 = Record(snapshot: snapshot, generation: generation, durability: durability) }
    }

    /// Applies ``SessionAdoption`` to what the file holds, in one critical section with the change it makes — so a
    /// rotation made here meanwhile is never overwritten by a file read before it — and returns the decision.
    /// The file's account is taken over without being written back.
    @discardableResult
    func reconcile(with file: StoredSession) -> SessionAdoption {
        state.withLock { state -> SessionAdoption in
            let decision = SessionAdoption.decide(memory: state, file: file)
            switch (decision, file) {
            case (.adopt, .account(let stored, let generation)):
                state = Record(snapshot: stored, generation: generation, durability: .saved)
            case (.adopt, _):
                // Signed out elsewhere: the pending write, if any, is dropped with the account.
                state = Record(snapshot: Snapshot(), generation: state.generation, durability: .configured)
            case (.same, .account(_, let generation)):
                state.generation = max(state.generation, generation)
                state.durability = .saved
            case (.same, _), (.keep, _):
                break
            }
            return decision
        }
    }

    /// Notes that `written` reached the file with `generation`. A change made since stays unsaved, with a
    /// generation above the one written, so the file's (now older) account still cannot replace it.
    package func saved(_ written: Snapshot, generation: Int) {
        state.withLock { state in
            if state.snapshot == written {
                state.generation = max(state.generation, generation)
                state.durability = .saved
            } else {
                state.generation = max(state.generation, generation + 1)
            }
        }
    }
}

extension AccountSession.Record {
    /// A change made here: unsaved until written, one generation above what it replaces.
    fileprivate mutating func changed(to next: AccountSession.Snapshot) {
        snapshot = next
        generation += 1
        durability = .unsaved
    }
}
