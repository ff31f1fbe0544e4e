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

/// A dynamic client registration request (RFC 7591 §2, §3.1) for a discovered route's sign-in: a public native
/// client (`token_endpoint_auth_method: none`, RFC 8252 §8.4; `application_type: native`, OIDC Registration §2)
/// with a loopback redirect (`http://127.0.0.1:PORT/`, RFC 8252 §7.3), asking for the authorization code and
/// refresh token grants only.
struct ClientRegistrationRequest: Sendable, Equatable, Encodable {
    var clientName = "bearer-proxy"
    var redirectURIs: [String]
    var grantTypes = ["authorization_code", "refresh_token"]
    var responseTypes = ["code"]
    var tokenEndpointAuthMethod = "none"
    var applicationType = "native"
    /// Space-separated (RFC 7591 §2); left out when there is none.
    var scope: String?

    enum CodingKeys: String, CodingKey {
        case clientName = "client_name"
        case redirectURIs = "redirect_uris"
        case grantTypes = "grant_types"
        case responseTypes = "response_types"
        case tokenEndpointAuthMethod = "token_endpoint_auth_method"
        case applicationType = "application_type"
        case scope
    }

    /// - Parameter redirectPort: the port the sign-in's loopback listener uses.
    init(redirectPort: Int, scopes: [String]) {
        redirectURIs = ["http://127.0.0.1:\(redirectPort)/"]
        scope = scopes.isEmpty ? nil : scopes.joined(separator: " ")
    }

    /// The request body: `application/json` (RFC 7591 §3.1).
    package var body: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and arrays of strings only: encoding cannot fail.
        return (try? Array(encoder.encode(self))) ?? []
    }
}
