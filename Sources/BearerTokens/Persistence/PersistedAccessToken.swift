import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A cached access token as stored in the token cache file.
///
/// The token value is a secret: `description`, `debugDescription` and the reflection `dump` uses all print
/// `<redacted>` in its place, so a token that reaches a log line or an assertion message by accident does not leak.
public struct PersistedAccessToken: Codable, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The requested scope set, sorted (the cache key).
    public var scopes: [String]
    /// What the provider said it granted (its `scope` response), sorted; a request for any subset may reuse the
    /// token, as MSAL does (protocols.md §8).
    public var grantedScopes: [String]
    /// The bearer token itself.
    public var value: String
    /// When the provider says the token stops working.
    public var expiresOn: Date
    /// When to refresh it proactively.
    public var refreshOn: Date
    /// A hash of the claims challenge the token was obtained with (SPEC §7 `insufficient_claims`), nil otherwise;
    /// a token obtained without the claims does not satisfy that challenge.
    var claimsHash: String?
    /// The thumbprint of the DPoP key the token is bound to (RFC 9449 §6); nil for a bearer token.
    public var boundKey: String?

    /// Sorts both scope lists so that equal sets compare and encode equal.
    public init(
        scopes: [String], grantedScopes: [String], value: String, expiresOn: Date, refreshOn: Date,
        claimsHash: String? = nil, boundKey: String? = nil
    ) {
        self.scopes = scopes.sorted()
        self.grantedScopes = grantedScopes.sorted()
        self.value = value
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.claimsHash = claimsHash
        self.boundKey = boundKey
    }

    // These are the keys of the token cache file (format version 1): renaming a property must not rename its key.
    package enum CodingKeys: String, CodingKey {
        case scopes, grantedScopes, value, expiresOn, refreshOn, claimsHash, boundKey
    }

    public var description: String {
        let claims = claimsHash.map { ", claimsHash: \($0)" } ?? ""
        let bound = boundKey.map { ", boundKey: \($0)" } ?? ""
        return "PersistedAccessToken(scopes: \(scopes), grantedScopes: \(grantedScopes), value: <redacted>, "
            + "expiresOn: \(expiresOn), refreshOn: \(refreshOn)\(claims)\(bound))"
    }

    public var debugDescription: String { description }

    // `dump` and Swift Testing's failure messages walk the mirror, not `description`.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "scopes": scopes, "grantedScopes": grantedScopes, "value": "<redacted>", "expiresOn": expiresOn,
                "refreshOn": refreshOn, "claimsHash": claimsHash as Any,
                "boundKey": boundKey as Any,
            ], displayStyle: .struct)
    }
}
