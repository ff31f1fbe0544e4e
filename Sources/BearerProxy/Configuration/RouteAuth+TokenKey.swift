extension RouteAuth {
    /// The key of the route's token in the token cache: its scope set — or, for the `firebase` flow's two kinds,
    /// a reserved set naming the kind (one Firebase ID token for every `firebase-id` route, one Microsoft token
    /// for every `provider-access` route). nil for routes that carry no token.
    public var tokenKey: ScopeSet? {
        switch self {
        case .none: nil
        case .bearer(let scopes): scopes
        case .firebaseID: FirebaseTokenKind.idToken.key
        case .providerAccess: FirebaseTokenKind.providerAccess.key
        }
    }
}

/// The two tokens a Firebase sign-in yields (docs/firebase.md §6).
public enum FirebaseTokenKind: String, Sendable, CaseIterable {
    /// The Firebase ID token (one hour, refreshed through securetoken).
    case idToken = "firebase-id"
    /// The Microsoft access token Firebase returned (about one hour, not refreshable through Firebase).
    case providerAccess = "provider-access"

    /// Its reserved cache key: a URN no provider's scope can collide with.
    public var key: ScopeSet { ScopeSet(["urn:bearer-proxy:firebase:" + rawValue]) }

    init?(key: ScopeSet) {
        guard let kind = Self.allCases.first(where: { $0.key == key }) else { return nil }
        self = kind
    }
}
