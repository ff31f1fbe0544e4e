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

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 §2; OpenID Connect Discovery §3 uses the same names), the
/// members a sign-in needs.
struct AuthorizationServerMetadata: Sendable, Equatable, Decodable {
    package var issuer: String
    package var authorizationEndpoint: String?
    package var tokenEndpoint: String?
    package var registrationEndpoint: String?
    package var revocationEndpoint: String?
    var codeChallengeMethodsSupported: [String]?
    /// How a confidential client authenticates at the token endpoint (RFC 8414 §2; absent means
    /// `client_secret_basic`).
    var tokenEndpointAuthMethodsSupported: [String]?
    var scopesSupported: [String]?
    /// Client ID Metadata Documents (MCP 2025-11-25; draft-ietf-oauth-client-id-metadata-document).
    var clientIDMetadataDocumentSupported: Bool?
    /// RFC 9207: the server sends `iss` with the authorization response.
    var authorizationResponseIssParameterSupported: Bool?
    /// RFC 9126 §5: where a client pushes its authorization request before the browser is sent.
    package var pushedAuthorizationRequestEndpoint: String?
    /// RFC 9126 §5: the server takes authorization requests only as pushed ones.
    var requirePushedAuthorizationRequests: Bool?
    /// RFC 9449 §5.1: the JWS algorithms the server accepts in DPoP proofs; absent: it says nothing of DPoP.
    var dpopSigningAlgValuesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case registrationEndpoint = "registration_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case scopesSupported = "scopes_supported"
        case clientIDMetadataDocumentSupported = "client_id_metadata_document_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
    }

    package static func decode(_ body: [UInt8], url: String) throws(DiscoveryError) -> AuthorizationServerMetadata {
        do {
            return try JSONDecoder().decode(AuthorizationServerMetadata.self, from: Data(body))
        } catch {
            throw .invalidMetadata(
                url: url, reason: "not a JSON object with a string \"issuer\" (and the RFC 8414 member types)")
        }
    }

    /// PKCE with S256 is advertised (RFC 8414 §2 `code_challenge_methods_supported`; the MCP specification
    /// requires a client to refuse a server that does not list it — absent means "no PKCE", RFC 8414 §2).
    var supportsS256: Bool { codeChallengeMethodsSupported?.contains("S256") == true }
}
