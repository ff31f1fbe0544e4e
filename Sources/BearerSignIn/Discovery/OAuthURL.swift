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
    let parts: URLParts

    /// - Parameter role: what the URL is, for the message ("token endpoint").
    init(_ text: String, role: String) throws(DiscoveryError) {
        if let address = Self.zonedAddress(in: text) { throw .zonedAddress(role: role, url: text, address: address) }
        guard let parts = try? URLParts(parsing: text), parts.userinfo == nil, parts.fragment == nil,
            parts.scheme == "https" || parts.scheme == "http"
        else { throw .invalidURL(role: role, url: text) }
        guard parts.scheme == "https" || parts.isLoopback else { throw .insecureURL(role: role, url: text) }
        self.text = text
        self.parts = parts
    }

    /// The IPv6 literal with a zone that `text`'s authority names (RFC 6874: `[fe80::1%25eth0]`), as
    /// `fe80::1%eth0`; nil for any other host. Such a URL is refused whatever the route allows: a browser does not
    /// open it (the WHATWG URL standard has no zones), `Host` may not carry the zone (RFC 6874 §4), and what it
    /// reaches is a link on one interface of this machine.
    static func zonedAddress(in text: String) -> String? {
        guard let start = text.firstRange(of: "://")?.upperBound else { return nil }
        let authority = text[start...].prefix { !"/?#".contains($0) }
        guard let open = authority.firstIndex(of: "["), let close = authority.lastIndex(of: "]"), open < close,
            case let literal = authority[authority.index(after: open)..<close],
            let percent = literal.firstIndex(of: "%"), HostName.ipv6Groups(literal[..<percent]) != nil
        else { return nil }
        var zone = literal[literal.index(after: percent)...]
        if zone.hasPrefix("25") { zone = zone.dropFirst(2) }
        return String(literal[..<percent]) + "%" + zone
    }

    /// `scheme://authority` as written, for URLs built from this one (the text up to its path; a query is
    /// refused where this is used).
    var originText: String {
        var rest = Substring(text)
        if let query = parts.query { rest = rest.dropLast(query.utf8.count + 1) }
        return String(rest.dropLast(parts.path.utf8.count))
    }
}
