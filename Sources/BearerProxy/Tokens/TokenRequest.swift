/// What a flow is asked for: a token for one scope set, optionally satisfying a claims challenge.
public struct TokenRequest: Sendable, Hashable, CustomStringConvertible {
    public var scopes: ScopeSet
    /// A claims request (OpenID Connect Core §5.5) from a resource server's `insufficient_claims` challenge,
    /// as decoded JSON text; nil for an ordinary request.
    public var claims: String?

    public init(scopes: ScopeSet, claims: String? = nil) {
        self.scopes = scopes
        self.claims = claims
    }

    public var description: String { claims == nil ? "\(scopes)" : "\(scopes) (with claims)" }
}
