import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// Where metadata lives when nobody says: the well-known URLs, in the order the MCP authorization specification
/// tries them.
enum WellKnownURL {
    /// RFC 9728 §3.1: the path-form URL (the well-known segment inserted between the upstream's origin and its
    /// path), then the root-form one; for an upstream without a path only the root form.
    package static func protectedResource(for upstream: Upstream) -> [String] {
        let root = "\(upstream.scheme.rawValue)://\(upstream.hostHeader)/.well-known/oauth-protected-resource"
        return upstream.basePath.isEmpty ? [root] : [root + upstream.basePath, root]
    }

    /// RFC 8414 §3.1 path-inserted, OpenID Connect path-inserted, OpenID Connect Discovery §4 path-appended; for
    /// an issuer without a path, the first two at the root. A terminating `/` of the issuer's path is removed
    /// first (RFC 8414 §3.1).
    package static func authorizationServer(issuer: OAuthURL) -> [String] {
        let origin = issuer.originText
        var path = Substring(issuer.parts.path)
        while path.hasSuffix("/") { path.removeLast() }
        let oauth = origin + "/.well-known/oauth-authorization-server"
        let openID = origin + "/.well-known/openid-configuration"
        guard !path.isEmpty else { return [oauth, openID] }
        return [oauth + path, openID + path, origin + path + "/.well-known/openid-configuration"]
    }
}
