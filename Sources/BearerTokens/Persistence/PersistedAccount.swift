import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything persisted for one account: the token cache file `tokens-<accountKey>.json` holds exactly one.
///
/// The refresh token and the access tokens' values are secrets: `description`, `debugDescription` and the
/// reflection `dump` uses never show them.
public struct PersistedAccount: Codable, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The sign-in flow that produced the account (`dev`, `refresh-token`, …), as named in routes.json.
    public var flow: String
    /// Who is signed in, when known.
    public var identity: AccountIdentity?
    /// The refresh token, for flows that have one. A new one replaces the old (RFC 6749 §6).
    public var refreshToken: String?
    /// How many times a different refresh token has been written here; absent (nil) reads as 0, which is all that
    /// older builds write. It is what tells a process holding a refresh token it could not write which token is newer —
    /// the file's or its own — where "different" cannot (see ``SessionAdoption``). An optional key: older builds ignore
    /// it and still read the file, so the format stays version 1.
    var refreshTokenGeneration: Int?
    /// One entry per scope set.
    public var accessTokens: [PersistedAccessToken]
    /// When the account was last written.
    public var updatedAt: Date

    public init(
        flow: String, identity: AccountIdentity? = nil, refreshToken: String? = nil,
        refreshTokenGeneration: Int? = nil, accessTokens: [PersistedAccessToken] = [], updatedAt: Date
    ) {
        self.flow = flow
        self.identity = identity
        self.refreshToken = refreshToken
        self.refreshTokenGeneration = refreshTokenGeneration
        self.accessTokens = accessTokens
        self.updatedAt = updatedAt
    }

    // These are the keys of the token cache file (format version 1): renaming a property must not rename its key.
    package enum CodingKeys: String, CodingKey {
        case flow, identity, refreshToken, refreshTokenGeneration, accessTokens, updatedAt
    }

    public var description: String {
        let refresh = refreshToken == nil ? "none" : "<redacted>"
        return "PersistedAccount(flow: \(flow), identity: \(identity.map { "\($0)" } ?? "none"), "
            + "refreshToken: \(refresh), refreshTokenGeneration: \(refreshTokenGeneration ?? 0), accessTokens: \(accessTokens), updatedAt: \(updatedAt))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "flow": flow, "identity": identity as Any, "refreshToken": refreshToken == nil ? "none" : "<redacted>",
                "refreshTokenGeneration": refreshTokenGeneration ?? 0, "accessTokens": accessTokens,
                "updatedAt": updatedAt,
            ], displayStyle: .struct)
    }
}
