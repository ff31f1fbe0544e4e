/// One change to the token cache, as the token cache file is told about it.
///
/// The file is shared by every process that uses the account (SPEC §7 "Several processes, one account"), so a change
/// names what changed rather than restating every token this process has: a full restatement would erase the
/// tokens that the other processes stored, and each would then fetch its own again.
public enum TokenCacheChange: Sendable, CustomStringConvertible {
    /// A token was obtained for its scope set; it replaces an older one for the same set.
    case stored(AccessToken)
    /// An upstream rejected the token with this value: it is dropped wherever it is.
    case rejected(value: String)
    /// The account changed (a sign-in, a sign-out): these are now the account's only tokens.
    case replacedAll([AccessToken])

    public var description: String {
        switch self {
        case .stored(let token): "stored(\(token))"
        case .rejected: "rejected(<redacted>)"
        case .replacedAll(let tokens): "replacedAll(\(tokens.count) tokens)"
        }
    }
}
