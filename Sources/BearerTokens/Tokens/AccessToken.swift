import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

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
    /// The token's fields, shared by its copies: the data plane copies the cached token out on every request, and
    /// one reference costs one retain and one release where the four references among the fields cost four of each
    /// (bench/counts.sh). Immutable, so sharing it changes nothing a copy can see.
    private final class Fields: Sendable {
        let value: String
        let authorizationHeader: String
        let scopes: ScopeSet
        let grantedScopes: Set<String>
        let expiresOn: Date
        let refreshOn: Date
        let issuedAt: Date
        let boundKey: String?
        /// `boundKey != nil`, asked on every request where a load of the optional string would retain it.
        let isBound: Bool
        /// For a bound token: `ath`, base64url(SHA-256(value)) (RFC 9449 §4.2), the same in every proof sent with it.
        let proofHash: String?

        init(
            value: String, scopes: ScopeSet, grantedScopes: Set<String>, expiresOn: Date, refreshOn: Date,
            issuedAt: Date, boundKey: String?
        ) {
            self.value = value
            // RFC 9449 §7.1: a DPoP-bound token goes with the `DPoP` scheme, never as a bearer token.
            self.authorizationHeader = (boundKey == nil ? "Bearer " : "DPoP ") + value
            self.scopes = scopes
            self.grantedScopes = grantedScopes
            self.expiresOn = expiresOn
            self.refreshOn = refreshOn
            self.issuedAt = issuedAt
            self.boundKey = boundKey
            self.isBound = boundKey != nil
            self.proofHash = boundKey == nil ? nil : DPoPKey.accessTokenHash(value)
        }
    }

    private let fields: Fields

    /// The bearer token itself. Only the data plane's header injection and `bearer-proxy token` read it.
    public var value: String { fields.value }
    /// `Bearer <value>`, or `DPoP <value>` for a DPoP-bound token (RFC 9449 §7.1), built once per token rather than
    /// once per request (a token is ~1 KiB).
    package var authorizationHeader: String { fields.authorizationHeader }
    /// The scope set the token was requested for.
    public var scopes: ScopeSet { fields.scopes }
    /// The scopes the provider says it granted (its `scope` response, else the requested ones); a later request
    /// for any subset of these can use this token (as MSAL does).
    public var grantedScopes: Set<String> { fields.grantedScopes }
    /// When the identity provider says the token stops working.
    public var expiresOn: Date { fields.expiresOn }
    /// When to refresh it proactively (`refresh_in` if the provider sent it, else the half-life).
    public var refreshOn: Date { fields.refreshOn }
    /// When this process received it (for a token read back from the token cache file: estimated from its
    /// half-life). Its lifetime, `expiresOn - issuedAt`, sets its margin (``margin``).
    public var issuedAt: Date { fields.issuedAt }
    /// For a token the server issued as `token_type` `DPoP` (RFC 9449 §5): the thumbprint (`jkt`) of the key it is
    /// bound to, without which it is useless — it must never be sent as a bearer token. Nil for a bearer token.
    public var boundKey: String? { fields.boundKey }
    /// Whether the token is DPoP-bound (``boundKey`` is set): one load, for the data plane's every request.
    package var isBound: Bool { fields.isBound }
    /// For a DPoP-bound token, the `ath` of every proof sent with it (RFC 9449 §4.2): hashed once per token.
    package var proofHash: String? { fields.proofHash }

    public init(
        value: String, scopes: ScopeSet, grantedScopes: [String]? = nil, expiresOn: Date, refreshOn: Date? = nil,
        issuedAt: Date, boundKey: String? = nil
    ) {
        fields = Fields(
            value: value, scopes: scopes, grantedScopes: Set(grantedScopes ?? scopes.scopes), expiresOn: expiresOn,
            refreshOn: refreshOn ?? issuedAt.addingTimeInterval(expiresOn.timeIntervalSince(issuedAt) / 2),
            issuedAt: issuedAt, boundKey: boundKey)
    }

    /// SPEC §7: a token with less than five minutes left is not used, so that it cannot expire while a request
    /// that carries it is still on its way (envoy #45749 is the bug this margin avoids).
    static let minimumRemainingLifetime: TimeInterval = 5 * 60

    /// How much life a token must have left to be sent: five minutes (SPEC §7), or a quarter of its lifetime when
    /// that is shorter — Keycloak's default 300 s tokens would otherwise never be usable, and every request would
    /// cost a token request (docs/tokens.md).
    var margin: TimeInterval {
        let lifetime = expiresOn.timeIntervalSince(issuedAt)
        guard lifetime.isFinite, lifetime > 0 else { return 0 }
        return min(Self.minimumRemainingLifetime, lifetime / 4)
    }

    /// Whether the token has not expired at `now`.
    public func isValid(at now: Date) -> Bool {
        expiresOn.timeIntervalSince(now) > 0
    }

    /// Whether the token may be sent at `now`: it is valid and has at least its ``margin`` left. (The token cache
    /// also sends a valid token it obtained moments ago: ``TokenCache/minimumFetchInterval``.)
    public func isUsable(at now: Date) -> Bool {
        let left = expiresOn.timeIntervalSince(now)
        return left > 0 && left >= margin
    }

    /// Whether this token may serve a request for `requested` (every requested scope was granted).
    func covers(_ requested: ScopeSet) -> Bool {
        requested.scopes.allSatisfy { grantedScopes.contains($0) }
    }

    public var description: String {
        let bound = boundKey.map { ", DPoP-bound to jkt \($0)" } ?? ""
        return "AccessToken(<redacted>, scopes: \(scopes), expiresOn: \(expiresOn)\(bound))"
    }

    public var debugDescription: String { description }
}
