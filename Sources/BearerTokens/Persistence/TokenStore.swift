import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// The token cache file of one account: `tokens-<accountKey>.json`, mode 0600, in the 0700 state directory
/// (SPEC §7 "Persistence").
///
/// Every change is a read-modify-write under the state directory's lock, so two processes — a `serve` and a
/// `login` in another terminal — never lose each other's updates; every write is a temporary file, fsync and
/// rename, so a crash leaves the old file or the new one, never a torn one. Readers take no lock: a rename is
/// atomic, so a reader sees one whole version or the other.
///
/// Modes are tightened, not refused: a cache file that is not 0600, or a state directory that is not 0700, is
/// silently changed to that mode on the next load or update (only the owner can have loosened it, and refusing
/// would leave the user's tokens exposed until they act, where fixing it closes the exposure at once).
///
/// The methods block the calling thread while another process holds the lock (for the length of one update), at most
/// ``StateDirectory/maximumLockWait``.
public final class TokenStore: Sendable {
    /// The state directory the file lives in.
    public let directory: StateDirectory
    /// The account's key (see ``AccountKey``).
    let accountKey: String
    /// `tokens-<accountKey>.json`.
    package let fileName: String

    /// `accountKey` must satisfy ``AccountKey/isValid(_:)`` (it becomes part of a file name); a command that takes
    /// one from the user checks that first.
    public init(directory: StateDirectory, accountKey: String) {
        precondition(AccountKey.isValid(accountKey), "an account key is 1-64 of [A-Za-z0-9_-]")
        self.directory = directory
        self.accountKey = accountKey
        self.fileName = "tokens-\(accountKey).json"
    }

    /// The cache file's absolute path.
    public var path: String { directory.path + "/" + fileName }

    /// Reads the cache file. An unusable one is renamed aside (under the lock, after reading it once more, so a
    /// file another process has just replaced is never the one moved) and reported as ``TokenStoreLoad/setAside(original:movedTo:reason:)``;
    /// the next load then finds no file.
    ///
    /// Throws only when the file exists but cannot be read at all (permissions, I/O errors): those are not
    /// evidence that the contents are bad, so nothing is moved.
    public func load() throws(StateError) -> TokenStoreLoad {
        try tightenDirectoryMode()
        switch try readContents() {
        case nil: return .empty
        case .account(let account)?: return .loaded(account)
        case .unusable?:
            return try directory.withLock { () throws(StateError) in
                switch try readContents() {
                case nil: return .empty
                case .account(let account)?: return .loaded(account)
                case .unusable(let reason)?: return try setAside(reason: reason)
                }
            }
        }
    }

    /// Applies `change` to the current on-disk value (nil when there is no file) and writes the result, all under
    /// the lock; setting it to nil deletes the file. Returns the value as written — dates rounded to the
    /// millisecond and scopes sorted, exactly what the next ``load()`` returns.
    ///
    /// An unusable file is set aside (as ``load()`` does) and `change` sees nil; a caller that must report that
    /// loads first. A change that leaves the value as it was writes nothing, so pollers of ``signature()`` do not
    /// wake up for nothing. `change` must be quick (other processes wait for it) and must not use this store or
    /// anything else that takes the state directory's lock: the lock is not reentrant, so that would deadlock.
    @discardableResult
    public func update(_ change: (inout PersistedAccount?) -> Void) throws(StateError) -> PersistedAccount? {
        try directory.withLock { () throws(StateError) in
            removeAbandonedTemporaryFiles()
            var before: PersistedAccount?
            switch try readContents() {
            case nil: before = nil
            case .account(let account)?: before = account
            case .unusable(let reason)?:
                _ = try setAside(reason: reason)
                before = nil
            }
            var after = before
            change(&after)
            guard let account = after.map(TokenFile.normalized) else {
                if before != nil { try deleteFile() }
                return nil
            }
            if account != before { try writeFile(account) }
            return account
        }
    }

    /// Forgets the account (`logout`): deletes the cache file, under the lock. Set-aside files are kept.
    public func remove() throws(StateError) {
        try directory.withLock { () throws(StateError) in
            removeAbandonedTemporaryFiles()
            try deleteFile()
        }
    }

    /// A cheap fingerprint of the cache file, nil when there is none, for a running proxy to poll: when it
    /// changes, another process wrote the file and ``load()`` returns the new contents.
    public func signature() -> FileSignature? {
        FileSignature(path: path)
    }
}

/// What ``TokenStore/load()`` found.
public enum TokenStoreLoad: Sendable, Equatable {
    /// No token cache file: the account is not signed in.
    case empty
    /// The file was read and decoded.
    case loaded(PersistedAccount)
    /// The file could not be used (not JSON, wrong shape, a version this build does not know, not a regular
    /// file). It was renamed from `original` to `movedTo` — never deleted, so nothing is lost if this build is
    /// the one that is wrong — and the caller reports `reason` and starts from an empty cache.
    case setAside(original: String, movedTo: String, reason: String)
}
