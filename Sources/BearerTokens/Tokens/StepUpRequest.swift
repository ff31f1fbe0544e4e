import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// A discovered route's step-up (`"stepUp": "auto"`, SPEC §6.3): its upstream answered `403` with
/// `error="insufficient_scope"` (RFC 6750 §3.1), and only a new sign-in for `scopes` — what the route's token was
/// granted and what the challenge asked for — can give a wider token: a refresh never widens what was granted
/// (RFC 6749 §6). `path` is where the upstream asked, the unit the sign-ins `serve` opens for it are bounded by.
public struct StepUpRequest: Sendable, Hashable, CustomStringConvertible {
    /// The scopes to sign in for, sorted (``StepUpScopes``).
    public var scopes: [String]
    /// The request's path after the route's prefix, without its query.
    public var path: String

    public init(scopes: [String], path: String) {
        self.scopes = scopes
        self.path = path
    }

    public var description: String { "step-up for \(scopes.joined(separator: " "))" }
}
