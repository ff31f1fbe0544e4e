import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The endpoints of an identity provider that the flows use.
package struct ProviderEndpoints: Sendable, Hashable {
    package var token: String
    var authorization: String?
    var deviceAuthorization: String?
    /// Token revocation (RFC 7009), when the provider offers it (Microsoft's identity platform does not).
    package var revocation: String?
    /// Where a browser signs out (OpenID Connect RP-Initiated Logout).
    package var endSession: String?
    /// The JWS algorithms the server accepts in DPoP proofs (RFC 9449 §5.1); empty when it says nothing — and a
    /// Microsoft authority says nothing.
    var dpopSigningAlgorithms: [String] = []

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
        dpopSigningAlgorithms = (object["dpop_signing_alg_values_supported"] as? [Any] ?? []).compactMap {
            $0 as? String
        }
    }
}
