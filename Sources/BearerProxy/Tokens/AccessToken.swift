#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An access token for one scope set, with the times that decide when it may be used.
///
/// The token value is a secret: `description` and `debugDescription` never show it, so a token that ends up in a
/// log line or an error message by accident prints `<redacted>`.
public struct AccessToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The bearer token itself. Only the data plane's header injection and `bearer-proxy token` read it.
    public let value: String
    /// `Bearer <value>`, built once per token rather than once per request (a token is ~1 KiB).
    let authorizationHeader: String
    /// The scope set the token was requested for.
    public let scopes: ScopeSet
    /// The scopes the provider says it granted (its `scope` response, else the requested ones); a later request
    /// for any subset of these can use this token (as MSAL does).
    public let grantedScopes: Set<String>
    /// When the identity provider says the token stops working.
    public let expiresOn: Date
    /// When to refresh it proactively (`refresh_in` if the provider sent it, else the half-life).
    public let refreshOn: Date

    public init(
        value: String, scopes: ScopeSet, grantedScopes: [String]? = nil, expiresOn: Date, refreshOn: Date? = nil,
        issuedAt: Date
    ) {
        self.value = value
        self.authorizationHeader = "Bearer " + value
        self.scopes = scopes
        self.grantedScopes = Set(grantedScopes ?? scopes.scopes)
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn ?? issuedAt.addingTimeInterval(expiresOn.timeIntervalSince(issuedAt) / 2)
    }

    /// SPEC §7: a token with less than five minutes left is not used, so that it cannot expire while a request
    /// that carries it is still on its way (envoy #45749 is the bug this margin avoids).
    public static let minimumRemainingLifetime: TimeInterval = 5 * 60

    /// Whether the token may still be sent at `now`.
    public func isUsable(at now: Date) -> Bool {
        expiresOn.timeIntervalSince(now) >= Self.minimumRemainingLifetime
    }

    /// Whether this token may serve a request for `requested` (every requested scope was granted).
    public func covers(_ requested: ScopeSet) -> Bool {
        requested.scopes.allSatisfy { grantedScopes.contains($0) }
    }

    public var description: String {
        "AccessToken(<redacted>, scopes: \(scopes), expiresOn: \(expiresOn))"
    }

    public var debugDescription: String { description }
}
