import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// A URL a server named during discovery (a metadata URL, an issuer, an endpoint), checked before anything uses
/// it: absolute, no user info or fragment, and https — plain http only on a loopback host, where no network sees
/// it (RFC 8414 §2, RFC 9728 §3, RFC 8252 §8.3). Whether it may reach its address at all is ``AddressPolicy``'s.
package struct OAuthURL: Sendable, Hashable {
    /// Exactly as the server wrote it: issuers are compared byte for byte (RFC 8414 §3.3).
    package let text: String
    package let parts: URLParts

    /// - Parameter role: what the URL is, for the message ("token endpoint").
    package init(_ text: String, role: String) throws(DiscoveryError) {
        guard let parts = try? URLParts(parsing: text), parts.userinfo == nil, parts.fragment == nil,
            parts.scheme == "https" || parts.scheme == "http"
        else { throw .invalidURL(role: role, url: text) }
        guard parts.scheme == "https" || parts.isLoopback else { throw .insecureURL(role: role, url: text) }
        self.text = text
        self.parts = parts
    }

    /// `scheme://authority` as written, for URLs built from this one (the text up to its path; a query is
    /// refused where this is used).
    package var originText: String {
        var rest = Substring(text)
        if let query = parts.query { rest = rest.dropLast(query.utf8.count + 1) }
        return String(rest.dropLast(parts.path.utf8.count))
    }
}
