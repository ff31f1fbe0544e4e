import Synchronization

/// The signed-in account: who it is and its refresh token. The one owner of both; every change it makes is
/// reported (to the token cache file), and changes made by another process are put in place with ``adopt(_:)``.
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

    private let state: Mutex<Snapshot>
    private let onChange: (@Sendable (Snapshot) -> Void)?

    public init(_ snapshot: Snapshot = Snapshot(), onChange: (@Sendable (Snapshot) -> Void)? = nil) {
        state = Mutex(snapshot)
        self.onChange = onChange
    }

    public var snapshot: Snapshot { state.withLock { $0 } }
    public var identity: AccountIdentity? { snapshot.identity }
    var refreshToken: String? { snapshot.refreshToken }
    public var isSignedIn: Bool { snapshot.refreshToken != nil || snapshot.identity != nil }

    /// Records a sign-in, a rotated refresh token (RFC 6749 §6: the new one replaces the old), or a newer identity.
    func update(refreshToken: String?, identity: AccountIdentity?) {
        let changed = state.withLock { state -> Snapshot? in
            var next = state
            if let refreshToken { next.refreshToken = refreshToken }
            if let identity { next.identity = identity }
            guard next != state else { return nil }
            state = next
            return next
        }
        if let changed { onChange?(changed) }
    }

    /// Records a new sign-in: the account and its refresh token replace whatever was there (one account per
    /// configuration, as MSAL keeps one per client id).
    func signedIn(_ account: SignedInAccount) {
        let next = Snapshot(refreshToken: account.refreshToken, identity: account.identity)
        state.withLock { $0 = next }
        onChange?(next)
    }

    /// Forgets the account.
    public func signOut() {
        state.withLock { $0 = Snapshot() }
        onChange?(Snapshot())
    }

    /// Takes over a refresh token (and the identity, when given) that is already in the token cache file — another
    /// process's rotation, or this one's, written under the ``RedemptionLock`` — without writing it again: a write
    /// queued now could land after a newer rotation and put back a token the provider has already retired.
    func adopt(refreshToken: String, identity: AccountIdentity?) {
        state.withLock { state in
            state.refreshToken = refreshToken
            if let identity { state.identity = identity }
        }
    }

    /// Takes over what another process wrote (a `login` or `logout` in another terminal), without writing back.
    public func adopt(_ snapshot: Snapshot) {
        state.withLock { $0 = snapshot }
    }
}
