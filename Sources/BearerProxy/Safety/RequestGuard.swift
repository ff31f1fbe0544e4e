import NIOHTTP1

/// Decides, from the request head alone, whether a request may go any further (SPEC §9).
///
/// A proxy that adds its owner's token turns every request that reaches it into an authenticated call, so each
/// check here stops one way a stranger could make that call: a web page through DNS rebinding (Host), a web page
/// through a cross-site request (Origin, `Sec-Fetch-Site`), another machine (the client key), a crafted path or
/// target that escapes the route (absolute-form, dot segments), or a message that two parsers would read
/// differently (framing and header-name variants). Pure: no I/O, so every case is unit-tested.
struct RequestGuard {
    let policy: SafetyPolicy

    /// Header names whose spelling with `_` instead of `-` is refused: a backend that normalises `_` to `-` (as
    /// CGI-style servers do) would otherwise see a header we meant to strip or replace (CVE-2025-64484).
    static let protectedNames: Set<String> = [
        "authorization", "proxy-authorization", "connection", "proxy-connection", "keep-alive", "transfer-encoding",
        "content-length", "host", "te", "trailer", "upgrade", "forwarded", "x-bearer-proxy-key", "x-request-id",
        "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
    ]

    func check(_ head: HTTPRequestHead) -> GuardDecision {
        // RFC 9110 §9.3.6/§9.3.8: this is a reverse proxy, not a tunnel, and TRACE would reflect credentials.
        if head.method == .CONNECT || head.method == .TRACE {
            return .refuse(.methodNotAllowed(method: head.method.rawValue, allowed: []))
        }
        if head.uri.utf8.count > policy.maximumURILength { return .refuse(.uriTooLong) }
        if let problem = checkHeaders(head) { return .refuse(problem) }

        // Host (RFC 9112 §3.2): exactly one, and one of ours. An absolute-form target's authority takes its place.
        let hosts = head.headers[canonicalForm: "host"]
        if hosts.count > 1 { return .refuse(.badRequest(detail: "The request has more than one Host header.")) }
        var uri = Substring(head.uri)
        if let authorityAndPath = Self.absoluteForm(uri) {
            guard isAllowed(host: authorityAndPath.authority) else {
                return .refuse(.forbiddenHost(host: String(authorityAndPath.authority)))
            }
            uri = authorityAndPath.path
        } else if let host = hosts.first {
            guard isAllowed(host: Substring(host)) else { return .refuse(.forbiddenHost(host: String(host))) }
        } else if head.version.minor >= 1 || head.version.major > 1 {
            return .refuse(.badRequest(detail: "HTTP/1.1 requests must carry a Host header."))
        }
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(String(uri))
        } catch {
            return .refuse(.badRequest(detail: Self.describe(error)))
        }

        if let key = policy.clientKey, target.path != "/-/health", !Self.presents(key, in: head.headers) {
            return .refuse(.clientKeyRequired)
        }

        // Browsers: an Origin we do not list, or a cross-site fetch, never gets a token.
        let origin = head.headers.first(name: "origin")
        let allowedOrigin = origin.map { policy.allowedOrigins.contains($0.lowercased()) } ?? false
        if let origin, !allowedOrigin { return .refuse(.forbiddenOrigin(origin: origin)) }
        if !allowedOrigin, let site = head.headers.first(name: "sec-fetch-site")?.lowercased(),
            site == "cross-site" || site == "same-site"
        {
            return .refuse(.crossSiteRequest(site: site))
        }
        if allowedOrigin, let origin, head.method == .OPTIONS,
            let requested = head.headers.first(name: "access-control-request-method")
        {
            return .preflight(
                origin: origin, requestedMethod: requested,
                requestedHeaders: head.headers.first(name: "access-control-request-headers"))
        }
        return .allow(target: target, corsOrigin: allowedOrigin ? origin : nil)
    }

    /// Framing and header-name checks NIO's parser leaves to us (it already refuses CL+TE, double Content-Length,
    /// obsolete line folding, bare LF and control characters).
    private func checkHeaders(_ head: HTTPRequestHead) -> ProxyError? {
        var bytes = 0
        for (name, value) in head.headers {
            bytes += name.utf8.count + value.utf8.count
            if name.utf8.contains(UInt8(ascii: "_")) {
                let normalized = name.lowercased().replacingOccurrences(of: "_", with: "-")
                if Self.protectedNames.contains(normalized) {
                    return .badRequest(detail: "The header name \"\(name)\" is refused: it imitates \(normalized).")
                }
            }
        }
        if head.headers.count > policy.maximumHeaderCount || bytes > policy.maximumHeaderBytes {
            return .headersTooLarge
        }
        let codings = head.headers[canonicalForm: "transfer-encoding"]
        if !codings.isEmpty {
            // RFC 9112 §6.1: HTTP/1.0 has no Transfer-Encoding; such a message's framing is faulty.
            if head.version.major == 1 && head.version.minor == 0 {
                return .badRequest(detail: "An HTTP/1.0 request cannot use Transfer-Encoding.")
            }
            // Only plain `chunked` is forwarded faithfully; any other coding would be dropped on the way.
            if codings.map({ $0.lowercased() }) != ["chunked"] {
                return .badRequest(detail: "Transfer-Encoding other than \"chunked\" is not supported.")
            }
        }
        return nil
    }

    /// Whether a `Host` value (or an absolute-form authority) names this proxy: exact name, lowercased, any port.
    func isAllowed(host value: Substring) -> Bool {
        let host = Self.hostWithoutPort(value).lowercased()
        return SafetyPolicy.loopbackHosts.contains(host) || policy.allowedHosts.contains(host)
    }

    /// `name` from `name`, `name:port`, `[v6]` or `[v6]:port`; the brackets of an IPv6 literal are kept.
    static func hostWithoutPort(_ value: Substring) -> Substring {
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return value }
            let rest = value[value.index(after: close)...]
            return rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber))
                ? value[...close] : value
        }
        if let colon = value.lastIndex(of: ":"), value[value.index(after: colon)...].allSatisfy(\.isNumber) {
            return value[..<colon]
        }
        return value
    }

    /// The authority and path of an absolute-form target (RFC 9112 §3.2.2), which a server must accept; the
    /// authority then replaces `Host` and must pass the same check.
    static func absoluteForm(_ uri: Substring) -> (authority: Substring, path: Substring)? {
        let lowered = uri.prefix(8).lowercased()
        let schemeLength: Int
        if lowered.hasPrefix("http://") {
            schemeLength = 7
        } else if lowered.hasPrefix("https://") {
            schemeLength = 8
        } else {
            return nil
        }
        let rest = uri.dropFirst(schemeLength)
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<end]
        var path = rest[end...]
        if path.isEmpty || path.hasPrefix("?") { path = Substring("/" + path) }
        return (authority, path)
    }

    /// Whether the request carries the client key, as `Proxy-Authorization: Bearer <key>` or
    /// `X-Bearer-Proxy-Key: <key>`.
    static func presents(_ key: ClientKey, in headers: HTTPHeaders) -> Bool {
        for value in headers[canonicalForm: "proxy-authorization"] {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer", key.matches(String(parts[1])) { return true }
        }
        for value in headers[canonicalForm: "x-bearer-proxy-key"] where key.matches(String(value)) { return true }
        return false
    }

    static func describe(_ rejection: RequestTarget.Rejection) -> String {
        switch rejection {
        case .notOriginForm: "The request target must be a path starting with \"/\"."
        case .dotSegment: "The path contains a \".\" or \"..\" segment (possibly percent-encoded); it is refused."
        case .forbiddenCharacter: "The path contains a NUL or control character; it is refused."
        }
    }
}
