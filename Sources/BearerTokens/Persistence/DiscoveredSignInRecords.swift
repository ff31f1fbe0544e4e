import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which sign-in a discovered route's tokens belong to (SPEC §6.3): the authorization server's issuer, the client id
/// and the RFC 8707 resource. Tokens are stored and looked up by all three, so a token of one authorization server,
/// client or resource is never found for another (audience isolation, mix-up).
public struct DiscoveredSignInKey: Sendable, Hashable, Codable {
    public var issuer: String
    public var clientID: String
    public var resource: String

    public init(issuer: String, clientID: String, resource: String) {
        self.issuer = issuer
        self.clientID = clientID
        self.resource = resource
    }
}

/// A client registered dynamically (RFC 7591) with one authorization server, kept for its next sign-ins. Stored
/// under its issuer and shown to no other server.
package struct PersistedRegistration: Sendable, Equatable, Codable {
    package var issuer: String
    package var registrationEndpoint: String
    package var clientID: String
    /// A secret the server issued despite `token_endpoint_auth_method: none`; never printed.
    package var clientSecret: String?
    package var secretExpiresAt: Int?
    /// The loopback redirect URI it was registered with; a later sign-in on any port listens there first.
    package var redirectURI: String?

    package init(
        issuer: String, registrationEndpoint: String, clientID: String, clientSecret: String? = nil,
        secretExpiresAt: Int? = nil, redirectURI: String? = nil
    ) {
        self.issuer = issuer
        self.registrationEndpoint = registrationEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.secretExpiresAt = secretExpiresAt
        self.redirectURI = redirectURI
    }
}

/// A discovered route's sign-in: what discovery found that the token requests need (cached with the tokens) and the
/// tokens themselves. The refresh token rotates; the newest is always the one stored.
package struct PersistedDiscoveredSignIn: Sendable, Equatable, Codable {
    package var key: DiscoveredSignInKey
    /// `configured` or `dynamic` (``ClientRegistration/kind``).
    package var clientKind: String
    package var tokenEndpoint: String
    package var revocationEndpoint: String?
    /// How a configured client with a secret authenticates at the token endpoint (`client_secret_basic` or
    /// `client_secret_post`), chosen from the server's metadata at sign-in; nil: Basic. The secret itself is never
    /// stored: it is read from the route's `clientSecretEnv`.
    package var tokenEndpointAuthMethod: String?
    /// The rest of the authorization server's metadata a sign-in needs, kept so that a `login ROUTE` whose
    /// discovery fails for now (no answer, 5xx) can sign in again with it; nil in a sign-in stored before they were
    /// kept.
    package var authorizationEndpoint: String?
    package var registrationEndpoint: String?
    package var codeChallengeMethods: [String]?
    package var issParameterSupported: Bool?
    package var tokenEndpointAuthMethods: [String]?
    /// RFC 9126 §5: where the authorization request is pushed first; nil where the server offers none.
    package var pushedAuthorizationRequestEndpoint: String?
    /// The server's `dpop_signing_alg_values_supported` (RFC 9449 §5.1) and the resource's
    /// `dpop_bound_access_tokens_required` (RFC 9728 §2), for a sign-in made again from the stored metadata.
    package var dpopSigningAlgorithms: [String]?
    package var dpopBoundAccessTokensRequired: Bool?
    /// The RFC 7638 thumbprint (`jkt`) of the DPoP key (RFC 9449) the sign-in's token requests prove possession of —
    /// the key in `dpop-discovered-signin-<h>.json` beside it, to which its refresh token and DPoP access tokens are
    /// bound; nil for a sign-in made without proofs. Its refreshes prove the same key, or are not made.
    package var proofKeyThumbprint: String?
    /// The stored access token's `token_type` when it is `DPoP` (RFC 9449 §5): bound to ``proofKeyThumbprint``'s
    /// key, sent with `Authorization: DPoP` and a proof; nil for a bearer token.
    package var tokenType: String?
    package var scopes: [String]
    package var refreshToken: String?
    package var accessToken: String?
    package var expiresOn: Date?
    package var issuedAt: Date?
    package var grantedScopes: [String]?
    /// The scopes the upstream's last answer asked for — a `403` `insufficient_scope` (RFC 6750 §3.1) — when it was
    /// one: `status` shows the route as needing a step-up to them. nil once an answer was not one, and in every new
    /// sign-in.
    package var stepUpScopes: [String]?
    /// Why the sign-in's tokens were forgotten — the upstream refused its only access token, the authorization
    /// server refused its refresh token (`invalid_grant`) or its client (`invalid_client`) — in the words the route's
    /// `401`, `token ROUTE` and `status` say; nil while it has tokens, and in every new sign-in.
    package var refusal: String?

    package init(
        key: DiscoveredSignInKey, clientKind: String, tokenEndpoint: String, revocationEndpoint: String? = nil,
        scopes: [String], refreshToken: String? = nil, accessToken: String? = nil, expiresOn: Date? = nil,
        issuedAt: Date? = nil, grantedScopes: [String]? = nil
    ) {
        self.key = key
        self.clientKind = clientKind
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.scopes = scopes
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.expiresOn = expiresOn
        self.issuedAt = issuedAt
        self.grantedScopes = grantedScopes
    }
}

extension PersistedDiscoveredSignIn {
    /// Forgets every token — the access token's expiry and grant with it, so that nothing reads as still signed in —
    /// noting `refusal` as the reason; the metadata and the key stay for the next `login ROUTE`.
    package mutating func forgetTokens(because refusal: String) {
        refreshToken = nil
        accessToken = nil
        expiresOn = nil
        issuedAt = nil
        tokenType = nil
        stepUpScopes = nil
        self.refusal = refusal
    }
}

/// Which sign-in each discovered route's upstream uses, written by `login ROUTE`: the data plane finds its route's
/// tokens through it without discovering again.
struct PersistedDiscoveredRoutes: Sendable, Equatable, Codable {
    package var routes: [String: DiscoveredSignInKey] = [:]

    init(routes: [String: DiscoveredSignInKey] = [:]) {
        self.routes = routes
    }
}

// The refresh token, the access token and a client secret are secrets: no rendering of these records shows them
// (house rule 6), whatever prints one by accident — an interpolation, a `dump`, a test's failure message.

extension PersistedRegistration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "PersistedRegistration(issuer: \(issuer), clientID: \(clientID), clientSecret: "
            + "\(clientSecret == nil ? "none" : "<redacted>"), redirectURI: \(redirectURI ?? "none"))"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "issuer": issuer, "registrationEndpoint": registrationEndpoint, "clientID": clientID,
                "clientSecret": clientSecret == nil ? "none" : "<redacted>", "redirectURI": redirectURI as Any,
            ], displayStyle: .struct)
    }
}

extension PersistedDiscoveredSignIn: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "PersistedDiscoveredSignIn(issuer: \(key.issuer), clientID: \(key.clientID), resource: \(key.resource), "
            + "refreshToken: \(refreshToken == nil ? "none" : "<redacted>"), accessToken: "
            + "\(accessToken == nil ? "none" : "<redacted>"), expiresOn: \(expiresOn.map { "\($0)" } ?? "none"))"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "key": key, "clientKind": clientKind, "tokenEndpoint": tokenEndpoint, "scopes": scopes,
                "refreshToken": refreshToken == nil ? "none" : "<redacted>",
                "accessToken": accessToken == nil ? "none" : "<redacted>", "expiresOn": expiresOn as Any,
            ], displayStyle: .struct)
    }
}
