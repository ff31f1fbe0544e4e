/// Where an OAuth flow signs in: a Microsoft authority (v2.0 endpoint paths) or any OpenID Connect issuer
/// (endpoints from its discovery document).
public enum IdentityEndpoint: Sendable, Hashable {
    /// E.g. `https://login.microsoftonline.com/organizations`, without a trailing `/`.
    case authority(String)
    /// An issuer identifier exactly as written (a trailing `/` is significant: it must equal the tokens' `iss`).
    case issuer(String)
}
