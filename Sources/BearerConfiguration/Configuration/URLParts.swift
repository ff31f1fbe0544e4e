import BearerHTTP
import BearerJSON

/// An absolute URL split into its RFC 3986 §3 parts without decoding anything, so a path keeps its exact bytes.
///
/// Only `scheme://authority` URLs are accepted; the caller decides which schemes and parts it allows.
package struct URLParts: Sendable, Hashable {
    /// Lowercased, e.g. `https`.
    package var scheme: String
    package var userinfo: String?
    /// Lowercased; IPv6 literals without their brackets.
    package var host: String
    package var port: Int?
    /// Raw, percent-encoding kept; empty when the URL has no path.
    package var path: String
    package var query: String?
    package var fragment: String?

    package var isLoopback: Bool { HostName.isLoopback(host) }

    /// Why a string is not an absolute URL; each case reads as the end of "… must be an absolute URL: ".
    package enum Failure: Error, Sendable, Equatable {
        case notAbsolute
        case whitespace
        case missingHost
        case invalidHost
        case invalidPort
        case invalidPathCharacter(String)
        case invalidPercentEncoding
    }

    package init(parsing text: String) throws(Failure) {
        guard !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            throw .whitespace
        }
        guard let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].hasPrefix("//"),
            Self.isScheme(text[..<colon])
        else { throw .notAbsolute }
        scheme = text[..<colon].lowercased()

        var rest = text[text.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        path = String(rest[authorityEnd...])
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        (host, port) = try Self.hostAndPort(authority)

        if let character = URICharacters.firstInvalidPathCharacter(path) { throw .invalidPathCharacter(character) }
        guard URICharacters.hasValidPercentEncoding(path) else { throw .invalidPercentEncoding }
    }

    /// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, URICharacters.isAlpha(first) else { return false }
        return text.utf8.allSatisfy {
            URICharacters.isAlpha($0) || URICharacters.isDigit($0) || "+-.".utf8.contains($0)
        }
    }

    /// The host and port of `authority`, with a port of 0 refused: a URL names a port something listens on.
    private static func hostAndPort(_ authority: Substring) throws(Failure) -> (String, Int?) {
        let parts: (host: String, port: Int?)
        do {
            parts = try HostName.authority(authority)
        } catch {
            switch error {
            case .missingHost: throw .missingHost
            case .invalidHost: throw .invalidHost
            case .invalidPort: throw .invalidPort
            }
        }
        guard parts.port != 0 else { throw .invalidPort }
        return parts
    }
}
