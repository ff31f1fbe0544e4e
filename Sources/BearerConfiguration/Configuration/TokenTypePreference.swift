/// Which kind of access token an OAuth or `dev` account (`account.tokenType`) or a discovered route's own sign-in (the
/// route's `tokenType`) asks its authorization server for: plain bearer tokens (RFC 6750), or tokens bound to a key the proxy
/// holds (DPoP, RFC 9449).
public enum TokenTypePreference: String, Sendable, Hashable, CaseIterable {
    /// Today's behaviour, and the default: no proof is sent, and the server issues bearer tokens.
    case bearer
    /// A DPoP proof on every token request: the server binds the tokens it issues to the proxy's key.
    case dpop
    /// DPoP when the authorization server's metadata lists `ES256` or `EdDSA` among its
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1; the built-in `dev` issuer lists both) — or, for a discovered route's own sign-in, when the protected resource's metadata says
    /// `dpop_bound_access_tokens_required` (RFC 9728 §2) — bearer otherwise: a Microsoft authority, which publishes no
    /// such list, gets bearer.
    case auto
}
