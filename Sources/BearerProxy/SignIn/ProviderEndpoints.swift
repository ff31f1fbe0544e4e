#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The endpoints of an identity provider that the flows use.
struct ProviderEndpoints: Sendable, Hashable {
    var token: String
    var authorization: String?
    var deviceAuthorization: String?
    /// Token revocation (RFC 7009), when the provider offers it (Microsoft's identity platform does not).
    var revocation: String?
    /// Where a browser signs out (OpenID Connect RP-Initiated Logout).
    var endSession: String?

    /// Microsoft identity platform v2.0 paths under an authority (`https://login.microsoftonline.com/{tenant}` or
    /// `https://{tenant}.ciamlogin.com/{tenant}.onmicrosoft.com`).
    init(microsoftAuthority authority: String) {
        let base = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        token = base + "/oauth2/v2.0/token"
        authorization = base + "/oauth2/v2.0/authorize"
        deviceAuthorization = base + "/oauth2/v2.0/devicecode"
        endSession = base + "/oauth2/v2.0/logout"
    }

    /// The endpoints named by a discovery document (OpenID Connect Discovery 1.0 §3).
    init?(discovery data: Data) {
        guard let object = JSONObject.dictionary(data),
            let token = object["token_endpoint"] as? String
        else { return nil }
        self.token = token
        authorization = object["authorization_endpoint"] as? String
        deviceAuthorization = object["device_authorization_endpoint"] as? String
        revocation = object["revocation_endpoint"] as? String
        endSession = object["end_session_endpoint"] as? String
    }
}
