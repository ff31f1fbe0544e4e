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

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2), the members discovery reads.
package struct ProtectedResourceMetadata: Sendable, Equatable, Decodable {
    /// The resource identifier: what tokens for it are requested for (RFC 8707 `resource`).
    package var resource: String
    /// Issuer identifiers of the authorization servers that issue tokens for it.
    var authorizationServers: [String]?
    var scopesSupported: [String]?
    /// Whether the resource accepts only DPoP-bound access tokens (RFC 9728 §2, RFC 9449 §5.2); absent means false.
    var dpopBoundAccessTokensRequired: Bool?

    enum CodingKeys: String, CodingKey {
        case resource
        case authorizationServers = "authorization_servers"
        case scopesSupported = "scopes_supported"
        case dpopBoundAccessTokensRequired = "dpop_bound_access_tokens_required"
    }

    /// The metadata in a JSON document, or why it is not usable.
    package static func decode(_ body: [UInt8], url: String) throws(DiscoveryError) -> ProtectedResourceMetadata {
        do {
            return try JSONDecoder().decode(ProtectedResourceMetadata.self, from: Data(body))
        } catch {
            throw .invalidMetadata(
                url: url,
                reason: "not a JSON object with a string \"resource\" (and string arrays for its lists)")
        }
    }

    /// RFC 9728 §3.3: the metadata is used only if its `resource` is the upstream — exactly, or the same origin
    /// with a path that is a prefix of the upstream's on a segment boundary (`https://api.example.com` or
    /// `https://api.example.com/mcp` for an upstream `https://api.example.com/mcp`; never `…/m`). Paths are
    /// compared byte for byte, percent-encoding and all; a resource with a query or fragment matches nothing.
    package static func resource(_ resource: String, matches upstream: Upstream) -> Bool {
        guard let parts = try? URLParts(parsing: resource), parts.userinfo == nil, parts.query == nil,
            parts.fragment == nil, parts.scheme == upstream.scheme.rawValue, parts.host == upstream.host,
            (parts.port ?? upstream.scheme.defaultPort) == upstream.port
        else { return false }
        var path = Substring(parts.path)
        while path.hasSuffix("/") { path.removeLast() }
        return upstream.basePath == path || upstream.basePath.hasPrefix(path + "/")
    }

    init(resource: String, authorizationServers: [String]? = nil, scopesSupported: [String]? = nil) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
    }
}
