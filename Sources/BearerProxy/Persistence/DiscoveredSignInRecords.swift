#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which sign-in a discovered route's tokens belong to (#25): the authorization server's issuer, the client id and
/// the RFC 8707 resource. Tokens are stored and looked up by all three, so a token of one authorization server,
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
struct PersistedRegistration: Sendable, Equatable, Codable {
    var issuer: String
    var registrationEndpoint: String
    var clientID: String
    /// A secret the server issued despite `token_endpoint_auth_method: none`; never printed.
    var clientSecret: String?
    var secretExpiresAt: Int?
    /// The loopback redirect URI it was registered with; a later sign-in on any port listens there first.
    var redirectURI: String?
}

/// A discovered route's sign-in: what discovery found that the token requests need (cached with the tokens, #25
/// item 1) and the tokens themselves. The refresh token rotates; the newest is always the one stored.
struct PersistedDiscoveredSignIn: Sendable, Equatable, Codable {
    var key: DiscoveredSignInKey
    /// `configured` or `dynamic` (``ClientRegistration/kind``).
    var clientKind: String
    var tokenEndpoint: String
    var revocationEndpoint: String?
    var scopes: [String]
    var refreshToken: String?
    var accessToken: String?
    var expiresOn: Date?
    var issuedAt: Date?
    var grantedScopes: [String]?
}

/// Which sign-in each discovered route's upstream uses, written by `login ROUTE`: the data plane finds its route's
/// tokens through it without discovering again.
struct PersistedDiscoveredRoutes: Sendable, Equatable, Codable {
    var routes: [String: DiscoveredSignInKey] = [:]
}

// The refresh token, the access token and a client secret are secrets: no rendering of these records shows them
// (house rule 6), whatever prints one by accident — an interpolation, a `dump`, a test's failure message.

extension PersistedRegistration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String {
        "PersistedRegistration(issuer: \(issuer), clientID: \(clientID), clientSecret: "
            + "\(clientSecret == nil ? "none" : "<redacted>"), redirectURI: \(redirectURI ?? "none"))"
    }

    var debugDescription: String { description }

    var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "issuer": issuer, "registrationEndpoint": registrationEndpoint, "clientID": clientID,
                "clientSecret": clientSecret == nil ? "none" : "<redacted>", "redirectURI": redirectURI as Any,
            ], displayStyle: .struct)
    }
}

extension PersistedDiscoveredSignIn: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String {
        "PersistedDiscoveredSignIn(issuer: \(key.issuer), clientID: \(key.clientID), resource: \(key.resource), "
            + "refreshToken: \(refreshToken == nil ? "none" : "<redacted>"), accessToken: "
            + "\(accessToken == nil ? "none" : "<redacted>"), expiresOn: \(expiresOn.map { "\($0)" } ?? "none"))"
    }

    var debugDescription: String { description }

    var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "key": key, "clientKind": clientKind, "tokenEndpoint": tokenEndpoint, "scopes": scopes,
                "refreshToken": refreshToken == nil ? "none" : "<redacted>",
                "accessToken": accessToken == nil ? "none" : "<redacted>", "expiresOn": expiresOn as Any,
            ], displayStyle: .struct)
    }
}
