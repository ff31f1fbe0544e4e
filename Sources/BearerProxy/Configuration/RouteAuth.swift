/// What a route puts in the `Authorization` header it forwards.
public enum RouteAuth: Sendable, Hashable {
    /// `"auth": "none"`: a pass-through route; no token is added (and the client's is still removed).
    case none
    /// An access token for these scopes from the account (for the `static` flow the set may be empty).
    case bearer(ScopeSet)
    /// The `firebase` flow's Firebase ID token (`"token": "firebase-id"`).
    case firebaseID
    /// The `firebase` flow's Microsoft access token for these scopes (`"token": "provider-access"`).
    case providerAccess(ScopeSet)

    /// The scope set the token is requested for, if the token has scopes.
    public var scopes: ScopeSet? {
        switch self {
        case .bearer(let scopes), .providerAccess(let scopes): scopes
        case .none, .firebaseID: nil
        }
    }
}
