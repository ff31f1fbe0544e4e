import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

/// The interface every sign-in flow implements: given a scope set, produce an access token for it.
///
/// The data plane never talks to a flow directly; it asks the ``TokenCache``, which owns the cached tokens and
/// makes sure a flow sees one request per scope set however many requests are waiting (SPEC §7).
public protocol SignInFlow: Sendable {
    /// The flow's name as written in `routes.json` (`dev`, `client-credentials`, …), for logs and `status`.
    var name: String { get }

    /// Obtains a fresh access token from the identity provider (or, for `dev`, mints one).
    func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken
}

/// What a flow is asked for: a token for one scope set, optionally satisfying a claims challenge.
public struct TokenRequest: Sendable, Hashable, CustomStringConvertible {
    public var scopes: ScopeSet
    /// A claims request (OpenID Connect Core §5.5) from a resource server's `insufficient_claims` challenge,
    /// as decoded JSON text; nil for an ordinary request.
    public var claims: String?
    /// The RFC 8707 `resource` to send with the request, besides the account's `extraParameters`: set for a
    /// discovered route whose authorization server is the account's own, only when the resource its upstream names
    /// is the scopes' own resource (SPEC §6.3 — Microsoft Entra refuses any other, AADSTS9010010); nil: none.
    public var resource: String?
    /// A discovered route's step-up: a new sign-in for wider scopes comes first (``StepUpRequest``); nil for an
    /// ordinary request.
    public var stepUp: StepUpRequest?

    public init(scopes: ScopeSet, claims: String? = nil, resource: String? = nil, stepUp: StepUpRequest? = nil) {
        self.scopes = scopes
        self.claims = claims
        self.resource = resource
        self.stepUp = stepUp
    }

    public var description: String {
        if let stepUp { return "\(scopes) (\(stepUp))" }
        return claims == nil ? "\(scopes)" : "\(scopes) (with claims)"
    }
}

/// Why no token could be had. The data plane maps each case to a status in ``ProxyError``; SPEC §7 requires that
/// the proxy answers these itself and never forwards a request without a token.
public enum TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A person has to sign in (not signed in, refresh token expired or revoked) — 401.
    case signInRequired(reason: String)
    /// The identity provider is unavailable or throttling us — 503 with `Retry-After`.
    case providerUnavailable(reason: String, retryAfterSeconds: Int)
    /// The identity provider refused the configuration itself (bad client secret, unknown scope) — 500: retrying
    /// cannot help until `routes.json` or the app registration changes.
    case misconfigured(reason: String)
    /// The authorization server refused the caller's own token that an on-behalf-of route exchanges (expired, not for
    /// this client, or short of claims) — 401 to the caller, with the server's claims challenge when it sent one
    /// (the decoded JSON of Entra's `claims`), for the caller to get a token that satisfies it.
    case subjectRefused(reason: String, claims: String?)
    /// The caller has not consented to the API an on-behalf-of route exchanges their token for — 403: signing in
    /// again alone does not help.
    case consentRequired(reason: String)

    /// Why, as the problem's detail says it.
    public var reason: String {
        switch self {
        case .signInRequired(let reason), .providerUnavailable(let reason, _), .misconfigured(let reason),
            .subjectRefused(let reason, _), .consentRequired(let reason):
            reason
        }
    }

    public var description: String {
        switch self {
        case .signInRequired(let reason): "sign-in required: \(reason)"
        case .providerUnavailable(let reason, let retryAfter):
            "identity provider unavailable (\(reason)); retry in \(retryAfter) s"
        case .misconfigured(let reason): "configuration rejected by the identity provider: \(reason)"
        case .subjectRefused(let reason, _): "the caller's token was refused for the exchange: \(reason)"
        case .consentRequired(let reason): "no consent for the exchange: \(reason)"
        }
    }
}
