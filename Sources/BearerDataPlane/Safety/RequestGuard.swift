import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// Decides, from the request head alone, whether a request may go any further (SPEC §9).
///
/// A proxy that adds its owner's token turns every request that reaches it into an authenticated call, so each
/// check here stops one way a stranger could make that call: a web page through DNS rebinding (Host), a web page
/// through a cross-site request (Origin, `Sec-Fetch-Site`), another machine (the client key), a crafted path or
/// target that escapes the route (absolute-form, dot segments), or a message that two parsers would read
/// differently (framing and header-name variants). Pure: no I/O, so every case is unit-tested.
///
/// A class, though immutable: each generation has one, and every request reads it; a struct was copied out of the
/// generation for each request's check — a retain of each of the policy's sets (bench/counts.sh).
package final class RequestGuard: Sendable {
    package let policy: SafetyPolicy

    /// The protected name a client's field `name` imitates with `_` for `-`, if any (nil for names without `_`).
    static func imitatesProtectedName(_ name: String) -> String? {
        guard let normalized = dashSpelling(name) else { return nil }
        return HeaderPolicy.rules(of: normalized).contains(.refusedWithUnderscore) ? normalized : nil
    }

    /// The first field of `request` that spells, with `_` for `-`, a field `rules` set or remove for a route, as
    /// it reads normalised. Nothing is built for the common request, whose names have no `_`.
    static func imitatedName(in request: ClientRequest, decidedBy rules: HeaderRules) -> String? {
        let span = request.bytes.readableBytesUInt8Span
        var lines = FieldLines(fieldsStart: request.parsed.fieldsStart, length: request.parsed.length)
        while let line = lines.next(in: span) {
            guard hasUnderscore(span, line.field.name),
                let normalized = dashSpelling(request.string(line.field.name))
            else { continue }
            if rules.remove.contains(normalized) || rules.set.contains(where: { $0.name.lowercased() == normalized }) {
                return normalized
            }
        }
        return nil
    }

    /// Whether the name at `span[name]` has a `_`: only then is its string built.
    private static func hasUnderscore(_ span: Span<UInt8>, _ name: Range<Int>) -> Bool {
        for index in name where span[index] == UInt8(ascii: "_") { return true }
        return false
    }

    /// `name` lowercased with `_` read as `-`, as a CGI-style backend reads it; nil when it has no `_`.
    private static func dashSpelling(_ name: String) -> String? {
        guard name.utf8.contains(UInt8(ascii: "_")) else { return nil }
        return name.lowercased().replacing("_", with: "-")
    }

    /// Checks a head that the request codec (`RequestDecoder`) accepted. The codec has already refused what is not
    /// HTTP/1.1 as all three reference parsers read it — framing, a missing or repeated Host, CONNECT, the target's
    /// length and bytes, bytes that are not UTF-8 — so those rules live there alone (a rule here that the codec made
    /// unreachable would be one no test could need).
    package func check(_ request: ClientRequest) -> GuardDecision {
        let head = request.line
        // RFC 9110 §9.3.8: TRACE would reflect the credentials the proxy adds. (CONNECT never gets here: 405 in the
        // codec.)
        if head.method == .TRACE {
            return .refuse(.methodNotAllowed(method: head.method.rawValue, allowed: []))
        }
        var fields = Fields()
        do {
            try fields.read(request, policy: policy)
        } catch {
            return .refuse(error)
        }

        // Host (RFC 9112 §3.2): exactly one (the codec's rule, missing included in HTTP/1.1), a valid authority, and
        // one of ours — in every form of the target. Beside an absolute-form target it must name the same
        // authority. RFC 9112 §3.2.2 lets the target win instead, but two authorities in one request are two answers
        // to "which host is this for" — one for the proxy's check, one for whoever reads the other — so the proxy
        // takes neither (docs/security.md).
        if let host = fields.host, !Authority.isValid(Substring(host)) {
            return .refuse(.badRequest(detail: "The Host header is not a valid host[:port]."))
        }
        var uri = Substring(head.uri)
        if let authorityAndPath = Self.absoluteForm(uri) {
            let authority = authorityAndPath.authority
            guard Authority.isValid(authority) else {
                return .refuse(.badRequest(detail: "The request target's authority is not a valid host[:port]."))
            }
            guard isAllowed(host: authority) else { return .refuse(.forbiddenHost(host: String(authority))) }
            if let host = fields.host, !Authority.same(Substring(host), authority) {
                return .refuse(
                    .badRequest(detail: "The Host header and the request target name different hosts."))
            }
            uri = authorityAndPath.path
        } else if let host = fields.host {
            guard isAllowed(host: Substring(host)) else { return .refuse(.forbiddenHost(host: host)) }
        }
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(String(uri))
        } catch {
            return .refuse(.badRequest(detail: Self.describe(error)))
        }

        if policy.clientKey != nil, target.path != "/-/health", !fields.presentedKey {
            return .refuse(.clientKeyRequired)
        }

        // Browsers: an Origin we do not list, or a cross-site fetch, never gets a token.
        let origin = fields.origin
        let allowedOrigin = origin.map { policy.allowedOrigins.contains($0.lowercased()) } ?? false
        if let origin, !allowedOrigin { return .refuse(.forbiddenOrigin(origin: origin)) }
        if !allowedOrigin, let site = fields.fetchSite?.lowercased(), site == "cross-site" || site == "same-site" {
            return .refuse(.crossSiteRequest(site: site))
        }
        if allowedOrigin, let origin, head.method == .OPTIONS, let requested = fields.preflightMethod {
            return .preflight(origin: origin, requestedMethod: requested, requestedHeaders: fields.preflightHeaders)
        }
        return .allow(target: target, corsOrigin: allowedOrigin ? origin : nil)
    }

    /// The header fields the guard looks at, read in one pass without allocating for the common ones.
    struct Fields {
        var host: String?
        var origin: String?
        var fetchSite: String?
        var preflightMethod: String?
        var preflightHeaders: String?
        var presentedKey = false

        /// Reads the fields where they lie in the head's bytes: a string is built only for a field the guard
        /// keeps (Host, Origin, …) or refuses (a name that imitates a protected one). Filled in place: returned,
        /// the struct was copied out, a retain and a release of each of its strings (bench/counts.sh).
        mutating func read(_ request: ClientRequest, policy: SafetyPolicy) throws(ProxyError) {
            var bytes = 0
            let span = request.bytes.readableBytesUInt8Span
            var lines = FieldLines(fieldsStart: request.parsed.fieldsStart, length: request.parsed.length)
            while let line = lines.next(in: span) {
                let name = line.field.name
                let value = line.field.value
                bytes += name.count + value.count
                if RequestGuard.hasUnderscore(span, name) {
                    let text = request.string(name)
                    if let imitated = RequestGuard.imitatesProtectedName(text) {
                        throw .badRequest(detail: "The header name \"\(text)\" is refused: it imitates \(imitated).")
                    }
                    continue
                }
                switch name.count {
                case 10 where FieldName.equals(span, name, "connection"):
                    // RFC 9110 §7.6.1 lets a client name any field, hop-by-hop ones included; the proxy refuses
                    // those it decides itself (the codec refused the framing ones, Host and Authorization).
                    if let named = RequestGuard.namedProxyControlledHeader(request.string(value)) {
                        throw .badRequest(
                            detail: "Connection may not name \(named): the proxy decides that header it")
                    }
                case 4 where FieldName.equals(span, name, "host"):
                    host = request.string(value)
                case 6 where FieldName.equals(span, name, "origin"):
                    if origin != nil { throw Self.repeated(request.string(name)) }
                    origin = request.string(value)
                case 14 where FieldName.equals(span, name, "sec-fetch-site"):
                    if fetchSite != nil { throw Self.repeated(request.string(name)) }
                    fetchSite = request.string(value)
                case 18 where FieldName.equals(span, name, "x-bearer-proxy-key"):
                    if let key = policy.clientKey, key.matches(request.string(value)) { presentedKey = true }
                case 19 where FieldName.equals(span, name, "proxy-authorization"):
                    if let key = policy.clientKey, let token = BearerCredentials.token(in: request.string(value)),
                        key.matches(String(token))
                    {
                        presentedKey = true
                    }
                case 29 where FieldName.equals(span, name, "access-control-request-method"):
                    if preflightMethod != nil { throw Self.repeated(request.string(name)) }
                    preflightMethod = request.string(value)
                case 30 where FieldName.equals(span, name, "access-control-request-headers"):
                    if preflightHeaders != nil {
                        throw Self.repeated(request.string(name))
                    }
                    preflightHeaders = request.string(value)
                default:
                    break
                }
            }
            // The count of fields is the codec's limit; their bytes, names and values, are this one.
            if bytes > policy.maximumHeaderBytes {
                throw .headersTooLarge
            }
        }

        private static func repeated(_ name: String) -> ProxyError {
            .badRequest(
                detail: "The request has more than one \(name) header; the proxy decides on it, so it must be one.")
        }
    }

    /// The first option of a `Connection` value that names a header the proxy controls, lowercased.
    static func namedProxyControlledHeader(_ value: String) -> String? {
        var named: String?
        HopByHop.forEachOption(in: value) { option in
            guard named == nil, HeaderPolicy.rules(ofBytes: option).contains(.refusedInConnection) else { return }
            named = String(decoding: option, as: UTF8.self).lowercased()
        }
        return named
    }

    /// Whether a `Host` value (or an absolute-form authority) names this proxy: exact name, lowercased, any port.
    func isAllowed(host value: Substring) -> Bool {
        let name = Self.hostWithoutPort(value)
        // The usual case, compared over the bytes without lowercasing a copy first (a `Substring`'s UTF-8 view costs
        // ~1 % of a request's CPU: docs/benchmarks.md).
        let bytes = name.utf8.span
        let all = 0..<bytes.count
        if FieldName.equals(bytes, all, "127.0.0.1") || FieldName.equals(bytes, all, "localhost") { return true }
        let host = name.lowercased()
        return SafetyPolicy.loopbackHosts.contains(host) || policy.allowedHosts.contains(host)
    }

    /// `name` from `name`, `name:port`, `[v6]` or `[v6]:port`; the brackets of an IPv6 literal are kept. Anything
    /// else is compared whole, and so allowed by no list.
    static func hostWithoutPort(_ value: Substring) -> Substring {
        guard let (host, port) = Authority.split(value) else { return value }
        guard let port else { return host }
        return Authority.port(port) != nil ? host : value
    }

    /// The authority and path of an absolute-form target (RFC 9112 §3.2.2), which a server must accept; the
    /// authority then replaces `Host` and must pass the same check.
    static func absoluteForm(_ uri: Substring) -> (authority: Substring, path: Substring)? {
        // Nearly every request is in origin-form: no need to look further (or to lowercase anything).
        if uri.utf8.first == UInt8(ascii: "/") { return nil }
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

    static func describe(_ rejection: RequestTarget.Rejection) -> String {
        switch rejection {
        case .notOriginForm: "The request target must be a path starting with \"/\"."
        case .dotSegment: "The path contains a \".\" or \"..\" segment (possibly percent-encoded); it is refused."
        case .forbiddenCharacter: "The path contains a NUL or control character; it is refused."
        case .ambiguousEncoding:
            "The path is encoded in a way an upstream could read as \".\" or \"/\" (encoded more than "
                + "\(RequestTarget.maximumDecodingRounds) times, %u, or overlong UTF-8); it is refused."
        case .malformedPercentEncoding:
            "The request target has a \"%\" that is not followed by two hexadecimal digits; it is refused."
        }
    }

    init(policy: SafetyPolicy) {
        self.policy = policy
    }
}

/// What the request guard decided about a request head.
package enum GuardDecision {
    /// Go on with `target` (an absolute-form target has become origin-form); `corsOrigin` is the allowed browser
    /// origin to answer with CORS headers, if the request came from one.
    case allow(target: RequestTarget, corsOrigin: String?)
    /// A CORS preflight from an allowed origin: answered by the proxy itself, never forwarded, never with a token.
    case preflight(origin: String, requestedMethod: String, requestedHeaders: String?)
    /// Refused before anything else happens.
    case refuse(ProxyError)
}
