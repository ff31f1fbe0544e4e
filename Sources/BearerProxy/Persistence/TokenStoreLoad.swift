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
