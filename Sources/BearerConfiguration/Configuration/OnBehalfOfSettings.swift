import BearerHTTP
import BearerJSON

/// What an `"auth": "on-behalf-of"` route exchanges the caller's own bearer token for: its `onBehalfOf` object and
/// its `scopes`. The caller's token is the subject of the exchange; it is never forwarded, and the proxy does not
/// validate it for access — the authorization server does (docs/security.md, "On behalf of the caller").
public struct OnBehalfOfSettings: Sendable, Hashable {
    /// The grant that exchanges the subject token.
    public enum Grant: String, Sendable, Hashable, CaseIterable {
        /// Microsoft Entra's on-behalf-of flow: `grant_type` `urn:ietf:params:oauth:grant-type:jwt-bearer` with the
        /// subject as `assertion` and `requested_token_use=on_behalf_of`.
        case jwtBearer = "jwt-bearer"
        /// OAuth 2.0 Token Exchange (RFC 8693 §2.1): `subject_token` and `subject_token_type`, with `audience`,
        /// `resource`, `scope`, `requested_token_type` and `actor_token` as configured.
        case tokenExchange = "token-exchange"
    }

    /// RFC 8693 §3's token type for an access token: what the caller's bearer token is, unless the route says.
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    /// RFC 8693 §3's token type for a JWT: what an actor token read from a platform's file is, unless the route says.
    public static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"
    /// How many subjects' tokens a route keeps unless it says (`maxSubjects`).
    public static let defaultMaximumSubjects = 1_000
    /// The most a route may keep: each subject costs its two tokens and about 4 KiB (docs/security.md).
    public static let maximumSubjectsLimit = 100_000

    /// `grant`. Default `jwt-bearer`.
    public var grant: Grant
    /// `scopes` of the route: required for `jwt-bearer`; for `token-exchange` optional (the empty set: none sent).
    public var scopes: ScopeSet
    /// `audience` (RFC 8693 §2.1), `token-exchange` only.
    public var audience: String?
    /// `resource` (RFC 8693 §2.1, RFC 8707), `token-exchange` only: an absolute URI.
    public var resource: String?
    /// `subjectTokenType`, `token-exchange` only. Default ``accessTokenType``.
    public var subjectTokenType: String
    /// `requestedTokenType`, `token-exchange` only. Default none (the server chooses).
    public var requestedTokenType: String?
    /// `actorToken`, `token-exchange` only: where the actor token comes from, read again at each exchange (the
    /// platform rotates it), in the shape of `account.clientAssertion`. Default none.
    public var actorToken: ClientCredentialsAccount.AssertionSource?
    /// `actorTokenType`, with `actorToken`. Default ``jwtTokenType``.
    public var actorTokenType: String
    /// `maxSubjects`: the number of subjects whose tokens the route keeps at once; the least recently used is
    /// forgotten for a new one. Default ``defaultMaximumSubjects``.
    public var maximumSubjects: Int

    public init(
        grant: Grant = .jwtBearer, scopes: ScopeSet, audience: String? = nil, resource: String? = nil,
        subjectTokenType: String = Self.accessTokenType, requestedTokenType: String? = nil,
        actorToken: ClientCredentialsAccount.AssertionSource? = nil, actorTokenType: String = Self.jwtTokenType,
        maximumSubjects: Int = Self.defaultMaximumSubjects
    ) {
        self.grant = grant
        self.scopes = scopes
        self.audience = audience
        self.resource = resource
        self.subjectTokenType = subjectTokenType
        self.requestedTokenType = requestedTokenType
        self.actorToken = actorToken
        self.actorTokenType = actorTokenType
        self.maximumSubjects = maximumSubjects
    }
}
