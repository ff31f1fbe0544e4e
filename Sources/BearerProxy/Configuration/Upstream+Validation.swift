extension Upstream {
    /// Why a string is not a usable upstream URL; `message` is the text a problem shows.
    enum Invalid: Error, Sendable, Equatable {
        case url(URLParts.Failure)
        case scheme
        case userinfo
        case query
        case fragment
        case dotSegment

        var message: String {
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
    init(validating text: String) throws(Invalid) {
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
        guard !Self.hasDotSegment(parts.path) else { throw .dotSegment }
        self.init(scheme: scheme, host: parts.host, port: parts.port, basePath: parts.path)
    }

    /// `.` and `..`, raw or percent-encoded: an upstream must name its path exactly (RFC 3986 §5.2.4).
    static func hasDotSegment(_ path: String) -> Bool {
        path.split(separator: "/").contains { dotSegments.contains($0.lowercased()) }
    }

    private static let dotSegments: Set<String> = [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
}
