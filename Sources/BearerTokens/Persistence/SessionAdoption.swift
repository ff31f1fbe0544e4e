import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// Whether the account in the token cache file replaces the one in memory — the one rule for every place that
/// reads the file while holding a session: the re-read under the redemption lock, the once-a-second poll, the retry
/// of a write that failed, and the second try after `invalid_grant` (docs/tokens.md).
///
/// "The file's refresh token is different, so another process rotated it" holds only while the file is known to
/// hold memory's token. When a rotated refresh token could not be written (disk full, a read-only directory, no
/// descriptor), the file still holds the token the provider has just retired, and taking that one over signs the
/// account out for good (`AADSTS70000 … already redeemed`). Memory's token then stays authoritative until its write
/// succeeds, and a file token replaces it only when the file is provably newer: its ``PersistedAccount/refreshTokenGeneration``
/// is at least memory's (a `login`, or another process, wrote after our failed write).
enum SessionAdoption: Sendable, Equatable {
    /// The file holds exactly memory's account: nothing to take over, and memory's is saved.
    case same
    /// The file's account replaces memory's: another process rotated the token, someone signed in or out elsewhere.
    case adopt
    /// Memory's account stays: it is newer than the file's (a write is pending or failed), or the file says nothing
    /// about it.
    case keep

    /// What to do with `file` given memory's `session`.
    ///
    /// | memory's token | no file | a different account in the file | file unreadable |
    /// |---|---|---|---|
    /// | configured (environment, flow) | keep | adopt if it has a refresh token | keep |
    /// | saved | adopt (signed out elsewhere) | adopt | keep |
    /// | unsaved | adopt (signed out elsewhere: never resurrect it) | adopt if its generation ≥ memory's | keep |
    package static func decide(memory session: AccountSession.Record, file: StoredSession) -> SessionAdoption {
        switch file {
        case .unreadable, .setAside:
            // A read that failed (EIO, EMFILE), or a file that was not a token cache this build can use (corrupt,
            // truncated, a newer format), says nothing about the account.
            return .keep
        case .noFile:
            switch session.durability {
            // An environment's refresh token, or a flow's own identity, was never in a file.
            case .configured: return .keep
            // Only `logout` deletes the file: a sign-out is explicit, and a pending write must not undo it.
            case .saved, .unsaved: return .adopt
            }
        case .account(let stored, let generation):
            if stored == session.snapshot { return .same }
            switch session.durability {
            case .configured: return stored.refreshToken == nil ? .keep : .adopt
            // The file held memory's token, so a different one was written after it (this keeps builds that write
            // no generation working).
            case .saved: return .adopt
            // Equal counts too: a `login` elsewhere that read the file before our failed write writes the same
            // generation we gave our unsaved token, and a person's sign-in wins.
            case .unsaved: return generation >= session.generation ? .adopt : .keep
            }
        }
    }
}

/// What the token cache file says about the account, as ``SessionAdoption`` reads it.
package enum StoredSession: Sendable, Equatable {
    /// No file: nobody signed in, or `logout` deleted it.
    case noFile
    /// The file's account and its refresh token's generation (0 when the file has none).
    case account(AccountSession.Snapshot, generation: Int)
    /// The file exists but could not be read: nothing is known.
    case unreadable
    /// The file could not be used (corrupt, truncated, a format this build does not know) and was set aside: it
    /// says nothing about who is signed in, and memory's account is written to a fresh file.
    case setAside

    init(_ account: PersistedAccount?) {
        guard let account else {
            self = .noFile
            return
        }
        self = .account(TokenPersistence.snapshot(of: account), generation: account.refreshTokenGeneration ?? 0)
    }
}
