import BearerHTTP
import BearerJSON

/// The server a route forwards to: scheme, host, port and the base path the rest of the request path is appended to.
///
/// Immutable once parsed, so the derived `hostHeader` and `url` can never disagree with the parts they come from.
public struct Upstream: Sendable, Hashable {
    /// The two schemes a route may forward to.
    public enum Scheme: String, Sendable, Hashable {
        case http
        case https

        /// 80 for http, 443 for https.
        public var defaultPort: Int { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// Lowercased; IPv6 literals without brackets.
    public let host: String
    /// The explicit port, or 80/443 from the scheme.
    public let port: Int
    /// Raw (percent-encoding kept), `""` for the root, never ending in `/`.
    public let basePath: String
    /// The `Host` header to send (RFC 9110 §7.2): `graph.microsoft.com`, `127.0.0.1:8080`, `[::1]:9000`.
    public let hostHeader: String
    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `::1`).
    public let isLoopback: Bool

    /// `scheme://hostHeader` + `basePath`, for logs and `status`.
    public var url: String { "\(scheme.rawValue)://\(hostHeader)\(basePath)" }

    /// Builds an upstream from validated parts; `basePath` loses any trailing `/`.
    package init(scheme: Scheme, host: String, port: Int?, basePath: String) {
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? scheme.defaultPort
        var path = Substring(basePath)
        while path.hasSuffix("/") { path.removeLast() }
        self.basePath = String(path)
        let authority = Authority.bracketed(self.host)
        self.hostHeader = self.port == scheme.defaultPort ? authority : "\(authority):\(self.port)"
        self.isLoopback = HostName.isLoopback(self.host)
    }

    /// Parses an absolute `http`/`https` URL with no user info, query or fragment; `nil` if it is not one.
    ///
    /// This checks syntax only; the rule that `http` needs a loopback host or `allowInsecureUpstream`
    /// belongs to the route.
    public init?(parsing text: String) {
        guard let upstream = try? Upstream(validating: text) else { return nil }
        self = upstream
    }
}

extension Upstream {
    /// Why a string is not a usable upstream URL; `message` is the text a problem shows.
    package enum Invalid: Error, Sendable, Equatable {
        case url(URLParts.Failure)
        case scheme
        case userinfo
        case query
        case fragment
        case dotSegment

        package var message: String {
            switch self {
            case .url(.notAbsolute), .url(.missingHost):
                "must be an absolute URL such as \"https://api.example.com/v1\""
            case .url(.whitespace): "must not contain spaces or control characters"
            case .url(.invalidHost): "does not name a valid host (a DNS name, an IPv4 address or [IPv6])"
            case .url(.invalidPort): "has an invalid port (use 1 to 65535)"
            case .url(.invalidPathCharacter(let character)):
                "path contains \(character), which must be percent-encoded (RFC 3986 §3.3)"
            case .url(.invalidPercentEncoding): "path has a \"%\" that does not start a %XX escape"
            case .scheme: "must use https (or http for loopback hosts or with \"allowInsecureUpstream\": true)"
            case .userinfo: "must not contain user information (\"user@\"); credentials never go in routes.json"
            case .query: "must not contain a query (\"?\"); the request's own query string is forwarded"
            case .fragment: "must not contain a fragment (\"#\")"
            case .dotSegment: "path must not contain \".\" or \"..\" segments"
            }
        }
    }

    /// Parses and checks an upstream URL, saying exactly what is wrong.
    package init(validating text: String) throws(Invalid) {
        let parts: URLParts
        do {
            parts = try URLParts(parsing: text)
        } catch {
            throw .url(error)
        }
        guard let scheme = Scheme(rawValue: parts.scheme) else { throw .scheme }
        guard parts.userinfo == nil else { throw .userinfo }
        guard parts.query == nil else { throw .query }
        guard parts.fragment == nil else { throw .fragment }
        // `.` and `..`, raw or percent-encoded: an upstream must name its path exactly (RFC 3986 §5.2.4).
        do {
            try RequestTarget.checkDotSegments(parts.path[...], .uriSyntax)
        } catch {
            throw .dotSegment
        }
        self.init(scheme: scheme, host: parts.host, port: parts.port, basePath: parts.path)
    }
}
