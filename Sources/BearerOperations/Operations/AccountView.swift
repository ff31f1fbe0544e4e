// A file of its own although short: this protocol is the boundary between `Admin/` and `Operations/` above and
// `Runtime/` (whose `AccountRuntime` conforms) — what those folders may know of the account, and nothing more.

import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens

/// What the proxy's own endpoints and `status` need to know of the account — its configuration, its tokens,
/// whether someone is signed in — without reaching into the composition root (``AccountRuntime`` conforms).
public protocol AccountView: Sendable {
    var configuration: Configuration { get }
    var tokens: TokenCache { get }
    /// The scope sets the routes need tokens for.
    var scopeSets: [ScopeSet] { get }
    var isSignedIn: Bool { get }
    var identity: AccountIdentity? { get }
    /// Writes of the token cache file that failed and are not yet made good (docs/operations.md); nil when there are
    /// none.
    var unsavedChanges: UnsavedChanges? { get }
    /// The `dev` account's issuer, whose documents `/-/` serves.
    var devIssuer: DevIssuer? { get }
    /// A discovered route's sign-in, as `status` shows it (SPEC §6.3); nil for any other route.
    func discoveredState(of route: Route) -> DiscoveredRouteState?
    /// The account's `tokenType` when it is not `bearer` (RFC 9449 DPoP); nil otherwise.
    var tokenType: TokenTypePreference? { get }
    /// The RFC 7638 thumbprint (`jkt`) of the account's DPoP key, when one exists — never the key.
    var dpopThumbprint: String? { get }
    /// For an on-behalf-of route, how many callers' tokens this process keeps for it; nil for any other route.
    func onBehalfOfCallers(of route: Route) -> Int?
}

extension AccountView {
    func discoveredState(of route: Route) -> DiscoveredRouteState? { nil }
    public var tokenType: TokenTypePreference? { nil }
    var dpopThumbprint: String? { nil }
    func onBehalfOfCallers(of route: Route) -> Int? { nil }
}
