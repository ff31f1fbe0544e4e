// Route and the values that exist only as its parts: RouteAuth with its token-cache key (and FirebaseTokenKind,
// the reserved keys of the firebase flow's two tokens), HeaderRules with HeaderField, and TLSSettings (which
// Configuration also holds, as the default a route without its own inherits). FirebaseTokenKind stays here rather
// than in Firebase/ because RouteAuth.tokenKey and StatusReport use it, and neither Configuration/ nor Operations/
// may use Firebase/ (architecture.md, Layering). Upstream, with its parsing, has its own file; reading routes:
// Reader/ConfigurationReader+Routes.swift.

import BearerHTTP
import BearerJSON

/// One entry of `routes`: requests under `prefix` go to `upstream` with the token `auth` describes.
public struct Route: Sendable {
    /// Starts with `/`, no trailing `/` (except the root `/`); matched on whole path segments.
    public var prefix: String
    public var upstream: Upstream
    public var auth: RouteAuth
    /// Default: none.
    public var headers: HeaderRules
    /// From `timeoutSeconds` (0 < t ≤ 86400); `nil` = the data plane's default.
    public var timeout: Duration?
    /// From `idleTimeoutSeconds` (0 < t ≤ 86400): how long a WebSocket tunnel on this route may carry no byte either
    /// way; `nil` = the connection's idle limit.
    public var idleTimeout: Duration?
    /// Uppercased method tokens; `nil` = every method (other methods get 405).
    public var methods: Set<String>?
    /// Default false: `http` upstreams are refused unless the host is loopback.
    var allowInsecureUpstream: Bool
    /// Default false: when true, add `X-Forwarded-For`, `-Proto` and `-Host`.
    public var forwardedHeaders: Bool
    /// The route's own `tls.caFile`, else the global one.
    public var tls: TLSSettings
    /// Headers a request must carry to use the route (SPEC §9): the global `requireHeader` and the route's own, both
    /// checked. Default none.
    public var requiredHeaders: [RequiredHeader]
    /// How the route's token is presented (`tokenType`, RFC 9449 §7.1): `auto` (the default) as the authorization
    /// server issued it — `Authorization: DPoP` with a proof per request for a DPoP-bound token, `Bearer` for any
    /// other —, `bearer` never with a proof (a DPoP-bound token is refused with a problem), `dpop` only with one (a
    /// bearer token is refused with a problem).
    public var tokenType: TokenTypePreference
    /// The HTTP version spoken to the upstream (`upstreamProtocol`). Default `http/1.1`.
    public var upstreamProtocol: UpstreamProtocol

    public init(
        prefix: String,
        upstream: Upstream,
        auth: RouteAuth,
        headers: HeaderRules = .empty,
        timeout: Duration? = nil,
        idleTimeout: Duration? = nil,
        methods: Set<String>? = nil,
        allowInsecureUpstream: Bool = false,
        forwardedHeaders: Bool = false,
        tls: TLSSettings = TLSSettings(),
        requiredHeaders: [RequiredHeader] = [],
        tokenType: TokenTypePreference = .auto,
        upstreamProtocol: UpstreamProtocol = .http1
    ) {
        self.prefix = prefix
        self.upstream = upstream
        self.auth = auth
        self.headers = headers
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.methods = methods
        self.allowInsecureUpstream = allowInsecureUpstream
        self.forwardedHeaders = forwardedHeaders
        self.tls = tls
        self.requiredHeaders = requiredHeaders
        self.tokenType = tokenType
        self.upstreamProtocol = upstreamProtocol
    }
}

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
    /// `"auth": "discover"`: a token from the authorization server the upstream's own 401 names (SPEC §6.3); never the
    /// account's token, and never a token-cache key shared with bearer routes.
    case discover(DiscoverySettings)
    /// `"auth": "on-behalf-of"`: a token the account's client obtains by exchanging the caller's own bearer token
    /// (Entra's on-behalf-of, RFC 8693), one per caller — never the account's token, and the caller's never forwarded.
    case onBehalfOf(OnBehalfOfSettings)

    /// The scope set the token is requested for, if the token has scopes.
    public var scopes: ScopeSet? {
        switch self {
        case .bearer(let scopes), .providerAccess(let scopes): scopes
        case .onBehalfOf(let settings): settings.scopes
        case .none, .firebaseID, .discover: nil
        }
    }
}

extension RouteAuth {
    /// The key of the route's token in the account's token cache: its scope set — or, for the `firebase` flow's two
    /// kinds, a reserved set naming the kind (one Firebase ID token for every `firebase-id` route, one Microsoft token
    /// for every `provider-access` route). nil for routes that carry no token of the account's.
    /// The one key of a discovered route's own token cache: a route has one audience and one sign-in.
    public static let discoveredTokenKey = ScopeSet(["urn:bearer-proxy:discovered"])

    public var tokenKey: ScopeSet? {
        switch self {
        case .none, .discover: nil
        case .bearer(let scopes): scopes
        // Its tokens are its callers', each in a cache of the caller's own (``OnBehalfOfSettings/scopes`` is the key
        // there): nothing of the account's is asked for it.
        case .onBehalfOf: nil
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

    package init?(key: ScopeSet) {
        guard let kind = Self.allCases.first(where: { $0.key == key }) else { return nil }
        self = kind
    }
}

/// The request headers a route adds or removes before forwarding (`"headers": {"set": {…}, "remove": […]}`).
public struct HeaderRules: Sendable, Hashable {
    /// Headers to set, replacing any the client sent; sorted by lowercased name.
    public var set: [HeaderField]
    /// Lowercased names of client headers to drop; sorted, no duplicates.
    public var remove: [String]

    /// Neither sets nor removes anything (the default).
    public static let empty = HeaderRules()

    public init(set: [HeaderField] = [], remove: [String] = []) {
        self.set = set.sorted { $0.name.lowercased() < $1.name.lowercased() }
        self.remove = Set(remove.map { $0.lowercased() }).sorted()
    }

    public var isEmpty: Bool { self.set.isEmpty && remove.isEmpty }

    /// Why a route may not set or remove `name`, or `nil` if it may: the fields ``HeaderPolicy`` gives to the proxy
    /// (hop-by-hop, or written by the proxy itself).
    ///
    /// The proxy owns these headers: framing (RFC 9112 §6), hop-by-hop headers (RFC 9110 §7.6.1),
    /// `Host` (derived from the upstream), `Authorization` (the injected token) and `X-Request-Id` (the exchange's).
    static func reservation(of name: String) -> String? {
        let rules = HeaderPolicy.rules(of: name)
        switch name.lowercased() {
        case "authorization": return "carries the injected token and cannot be set or removed here"
        case "host": return "is set from the upstream URL and cannot be set or removed here"
        case "content-length", "transfer-encoding":
            return "describes the message framing and cannot be set or removed here"
        case _ where rules.contains(.hopByHop):
            return "is a hop-by-hop header (RFC 9110 §7.6.1) and cannot be set or removed here"
        case _ where rules.contains(.setByProxy):
            return "is set by the proxy itself and cannot be set or removed here"
        default: return nil
        }
    }
}

/// One header a route sets on forwarded requests.
public struct HeaderField: Sendable, Hashable {
    /// As written in routes.json (header names are case-insensitive, RFC 9110 §5.1).
    public var name: String
    /// Free of control characters, so it can never split or smuggle a header.
    public var value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// How to trust upstream and identity-provider certificates: the system roots, plus an optional CA file.
public struct TLSSettings: Sendable, Hashable {
    /// A PEM file of extra trusted CA certificates (for internal CAs and test servers); `nil` = system roots only.
    ///
    /// Checked to exist and be readable at load time; a relative path is resolved against the directory of
    /// routes.json, so this is always absolute after `Configuration.load`.
    public var caFile: String?

    public init(caFile: String? = nil) {
        self.caFile = caFile
    }
}
