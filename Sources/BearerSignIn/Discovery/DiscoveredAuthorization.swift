import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// What discovery found for a route (SPEC §6.3): the resource, its authorization server with the endpoints a sign-in
/// uses, the scopes to ask for first and the client identity to use — every URL already checked (https, issuer,
/// addresses). A value: `discover` prints it; `login ROUTE` (``DiscoveredSignIn``) starts from it.
public struct DiscoveredAuthorization: Sendable, Equatable {
    /// Where the initial scopes came from.
    public enum ScopeSource: String, Sendable, Equatable {
        /// The `scope` of the upstream's `Bearer` challenge.
        case challenge
        /// The protected-resource metadata's `scopes_supported`.
        case metadata
        /// Neither: the sign-in asks for no scope.
        case none
        /// A step-up after a `403` `insufficient_scope`: `login ROUTE --scopes`, or the sign-in `serve` opens itself
        /// for a route with `"stepUp": "auto"`.
        case command
        /// The last sign-in's, with its stored metadata: discovery failed for now.
        case stored
    }

    /// The upstream's status for the unauthenticated probe (401 when it asks for a token).
    public var probeStatus: Int
    /// Whether its `Bearer` challenge named `resource_metadata`.
    public var metadataFromChallenge: Bool
    /// Protected-resource metadata URLs tried, in order; the last one found it.
    public var resourceMetadataAttempts: [MetadataAttempt]
    /// The metadata's `resource`, exactly as written: the RFC 8707 `resource` of every token request.
    public var resource: String
    /// The issuer the metadata names (the first of its `authorization_servers`), byte-equal to its own metadata's.
    public var issuer: String
    /// Authorization-server metadata URLs tried, in order; the last one found it.
    public var serverMetadataAttempts: [MetadataAttempt]
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var registrationEndpoint: String?
    public var revocationEndpoint: String?
    /// The server's pushed authorization request endpoint (RFC 9126 §5), nil when it offers none: the sign-in then
    /// pushes its authorization request there first, and the browser carries only the `request_uri`.
    public var pushedAuthorizationRequestEndpoint: String?
    public var codeChallengeMethods: [String]
    /// The server's `token_endpoint_auth_methods_supported` (RFC 8414 §2), nil when it lists none.
    var tokenEndpointAuthMethods: [String]?
    /// RFC 9207: the server says it sends `iss` with authorization responses (then a sign-in requires it).
    public var issParameterSupported: Bool
    public var scopes: [String]
    public var scopeSource: ScopeSource
    public var registration: ClientRegistration
    /// The server's `dpop_signing_alg_values_supported` (RFC 9449 §5.1), empty when it lists none: with the route's
    /// `tokenType`, whether the sign-in proves possession of a DPoP key (``DPoPBinding``).
    public var dpopSigningAlgorithms: [String]
    /// The protected resource accepts only DPoP-bound tokens (RFC 9728 §2 `dpop_bound_access_tokens_required`).
    public var dpopBoundAccessTokensRequired: Bool

    package init(
        probeStatus: Int, metadataFromChallenge: Bool, resourceMetadataAttempts: [MetadataAttempt], resource: String,
        issuer: String, serverMetadataAttempts: [MetadataAttempt], authorizationEndpoint: String, tokenEndpoint: String,
        registrationEndpoint: String? = nil, revocationEndpoint: String? = nil,
        pushedAuthorizationRequestEndpoint: String? = nil, codeChallengeMethods: [String],
        tokenEndpointAuthMethods: [String]? = nil, issParameterSupported: Bool, scopes: [String],
        scopeSource: ScopeSource, registration: ClientRegistration, dpopSigningAlgorithms: [String] = [],
        dpopBoundAccessTokensRequired: Bool = false
    ) {
        self.dpopSigningAlgorithms = dpopSigningAlgorithms
        self.dpopBoundAccessTokensRequired = dpopBoundAccessTokensRequired
        self.probeStatus = probeStatus
        self.metadataFromChallenge = metadataFromChallenge
        self.resourceMetadataAttempts = resourceMetadataAttempts
        self.resource = resource
        self.issuer = issuer
        self.serverMetadataAttempts = serverMetadataAttempts
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.registrationEndpoint = registrationEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.pushedAuthorizationRequestEndpoint = pushedAuthorizationRequestEndpoint
        self.codeChallengeMethods = codeChallengeMethods
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
        self.issParameterSupported = issParameterSupported
        self.scopes = scopes
        self.scopeSource = scopeSource
        self.registration = registration
    }
}
