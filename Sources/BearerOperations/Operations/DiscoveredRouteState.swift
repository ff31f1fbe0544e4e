import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `status` and `/-/status` show of a discovered route's sign-in (SPEC §6.3): its state, the authorization server,
/// the client's kind and id, the scopes and the access token's expiry — never a token or secret.
public struct DiscoveredRouteState: Sendable, Equatable {
    public enum State: String, Sendable {
        case needsSignIn = "needs-sign-in"
        case signedIn = "signed-in"
        /// Signed in, but the upstream's last answer was `403` `insufficient_scope`: a sign-in for more scopes is
        /// needed (`login ROUTE --scopes`).
        case needsStepUp = "needs-step-up"
        case error
    }

    var state: State
    var authorizationServer: String?
    public var clientKind: String?
    public var clientID: String?
    public var scopes: [String]
    /// For ``State/needsStepUp``: the scopes to sign in for (what was granted and what the upstream asked for).
    public var stepUpScopes: [String]
    public var expiresOn: Date?
    /// The RFC 7638 thumbprint (`jkt`) of the sign-in's DPoP key (RFC 9449), when its tokens are bound to one; never
    /// the key.
    public var dpopKeyThumbprint: String?
    /// Why it needs a sign-in, or what went wrong.
    var detail: String?
    /// Set while a process holds the sign-in's newest refresh token in memory only, its write having failed (a full
    /// disk): the file still shows the one the authorization server has retired.
    public var unsaved: Unsaved?

    /// A refreshed sign-in that a process holds but could not write yet.
    public struct Unsaved: Sendable, Equatable {
        public enum Holder: String, Sendable {
            /// The process that shows this state (`serve`'s `/-/status`): it knows how its writes went.
            case thisProcess = "this-process"
            /// Another process (a `serve` seen from `status`): known only from the lock it holds meanwhile.
            case anotherProcess = "another-process"
        }

        var heldBy: Holder
        /// Writes that failed so far, when this process holds it.
        var failedWrites: Int?
        /// Why the last write failed (a path and the system's reason, never a token), when this process holds it.
        var lastWriteError: String?

        public init(heldBy: Holder, failedWrites: Int? = nil, lastWriteError: String? = nil) {
            self.heldBy = heldBy
            self.failedWrites = failedWrites
            self.lastWriteError = lastWriteError
        }
    }

    public init(
        state: State, authorizationServer: String? = nil, clientKind: String? = nil, clientID: String? = nil,
        scopes: [String] = [], stepUpScopes: [String] = [], expiresOn: Date? = nil, detail: String? = nil,
        unsaved: Unsaved? = nil, dpopKeyThumbprint: String? = nil
    ) {
        self.dpopKeyThumbprint = dpopKeyThumbprint
        self.unsaved = unsaved
        self.stepUpScopes = stepUpScopes
        self.state = state
        self.authorizationServer = authorizationServer
        self.clientKind = clientKind
        self.clientID = clientID
        self.scopes = scopes
        self.expiresOn = expiresOn
        self.detail = detail
    }
}
