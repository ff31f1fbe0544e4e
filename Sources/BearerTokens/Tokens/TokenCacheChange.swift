import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

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
    /// Every token was replaced at once, for the reason given: these are now the cache's only tokens.
    case replacedAll([AccessToken], because: TokenReplacement)
    /// An upstream answered `403` `insufficient_scope` (RFC 6750 §3.1) to the token with this value, and a token for
    /// `wanted` would do: a discovered route's step-up (SPEC §6.3). The token was dropped, not rejected.
    case insufficientScope(value: String, wanted: [String])
    /// An upstream answered a request that carried the token with this value, neither refusing the token nor asking
    /// for more scopes: what a discovered route's `status` shows is its upstream's last answer.
    case answered(value: String)

    /// Whether the change came from this process — then the token cache file must hear of it — rather than from the
    /// file itself.
    public var isLocal: Bool {
        switch self {
        case .stored, .rejected, .insufficientScope, .answered: true
        case .replacedAll(_, let reason): !reason.cameFromFile
        }
    }

    public var description: String {
        switch self {
        case .stored(let token): "stored(\(token))"
        case .rejected: "rejected(<redacted>)"
        case .replacedAll(let tokens, let reason): "replacedAll(\(tokens.count) tokens, because: \(reason))"
        case .insufficientScope(_, let wanted):
            "insufficientScope(<redacted>, wanted: \(wanted.joined(separator: " ")))"
        case .answered: "answered(<redacted>)"
        }
    }
}

/// Why the token cache's tokens are replaced all at once; what each means for the back-off follows from it.
public enum TokenReplacement: Sendable, Equatable {
    /// A sign-in here: a new account, whose tokens are the ones the sign-in produced.
    case signedIn
    /// A sign-out here: no account, no tokens.
    case signedOut
    /// Read from the token cache file at start-up, for the account in memory.
    case restored
    /// Another process changed the file. With `sameCredential`, only tokens changed (it stored some); otherwise it
    /// signed in, out, or rotated the refresh token — a new credential.
    case changedElsewhere(sameCredential: Bool)

    /// The tokens came from the file, so there is nothing to write back.
    var cameFromFile: Bool {
        switch self {
        case .signedIn, .signedOut: false
        case .restored, .changedElsewhere: true
        }
    }
}
