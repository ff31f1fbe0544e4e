import BearerHTTP
import BearerJSON

/// What a `"auth": "discover"` route says about finding its authorization server and signing in (SPEC §6.3): its
/// `discovery` object. Everything else comes from the upstream's own 401 and metadata (RFC 9728, RFC 8414).
public struct DiscoverySettings: Sendable, Hashable {
    /// `clientId`: a client registered with the authorization server beforehand. Default none (a Client ID
    /// Metadata Document, else dynamic registration).
    public var clientID: String?
    /// `clientSecretEnv`: the environment variable holding the secret of the `clientId` client, when the
    /// authorization server registered it as a confidential client. Default none (a public client). Only the
    /// variable's name is kept here: the secret is read where a token request needs it, and never shown.
    public var clientSecretEnv: String?
    /// `clientMetadataDocument`: the https URL of the route's Client ID Metadata Document, used as its `client_id`
    /// when the authorization server supports it. Default none.
    public var clientMetadataDocument: String?
    /// `redirectPort`: the loopback port of the sign-in redirect. Default 0 (any free port).
    public var redirectPort: Int
    /// `allowPrivateAddresses`: lets a remote upstream name OAuth URLs on loopback, private or link-local addresses.
    /// Default false: a hostile 401 must not make the proxy reach into the local network (SSRF).
    public var allowPrivateAddresses: Bool
    /// `"authorizationServer": "account"`: the route says its authorization server is the account's own (Microsoft
    /// Entra has no dynamic registration): its tokens come from the account's sign-in — the account's client and
    /// refresh token, one more scope set of its token cache — with no registration and no second sign-in, and only when
    /// the upstream's metadata names the account's issuer. Default false: the route signs in at the authorization
    /// server its upstream names.
    public var usesAccount: Bool
    /// `"signIn": "auto"`: a running `serve` opens the browser sign-in itself when a request finds the route without
    /// a usable sign-in — one tab per route at a time, sign-ins at one authorization server one after another across
    /// processes (a kernel lock), and not again on the route for a while after one was declined or not finished in this
    /// process. (SPEC §6.3 asks for one per authorization server per machine, back-off included: not yet.) Default
    /// `"login"` (false): only `bearer-proxy login ROUTE` signs in, and an agent's request can never pop a browser tab.
    public var startsSignIn: Bool
    /// `"stepUp": "auto"`: on its upstream's `403` `insufficient_scope` (RFC 6750 §3.1), a running `serve` opens the
    /// browser sign-in for the union of the granted and the asked scopes itself and sends the request again, once,
    /// with the wider token — at most one such sign-in per route and path per back-off period, none on the route for a
    /// while after one was declined. Needs `"signIn": "auto"` (the same consent to tabs opened by `serve`). Default
    /// `"answer"` (false): the `403` is answered with a problem naming `login ROUTE --scopes`.
    public var stepsUp: Bool

    public init(
        clientID: String? = nil, clientSecretEnv: String? = nil, clientMetadataDocument: String? = nil,
        redirectPort: Int = 0, allowPrivateAddresses: Bool = false, usesAccount: Bool = false,
        startsSignIn: Bool = false, stepsUp: Bool = false
    ) {
        self.stepsUp = stepsUp
        self.usesAccount = usesAccount
        self.startsSignIn = startsSignIn
        self.clientID = clientID
        self.clientSecretEnv = clientSecretEnv
        self.clientMetadataDocument = clientMetadataDocument
        self.redirectPort = redirectPort
        self.allowPrivateAddresses = allowPrivateAddresses
    }
}
