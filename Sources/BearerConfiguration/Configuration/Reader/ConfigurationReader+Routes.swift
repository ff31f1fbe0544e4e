// The routes: each route's keys, with the rules for its prefix (RoutePrefix) and its headers.

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// `routes`: a non-empty array of routes with unique prefixes.
    func readRoutes(_ root: ObjectReader, context: RouteContext) -> [Route]? {
        guard let elements = root.array("routes", required: true) else { return nil }
        guard !elements.isEmpty else {
            root.report("routes", "must list at least one route")
            return nil
        }
        var routes: [Route] = []
        var prefixes: [String: Int] = [:]
        for (index, element) in elements.enumerated() {
            guard let object = ObjectReader(element, at: root.path("routes").index(index), problems: problems) else {
                continue
            }
            if let route = readRoute(object, index: index, prefixes: &prefixes, context: context) {
                routes.append(route)
            }
        }
        return routes.count == elements.count ? routes : nil
    }

    /// One route; `prefixes` maps each prefix seen so far to its route's index, to catch duplicates.
    private func readRoute(
        _ route: ObjectReader,
        index: Int,
        prefixes: inout [String: Int],
        context: RouteContext
    ) -> Route? {
        route.rejectUnknownKeys(allowed: ConfigurationKeys.route)
        let prefix = readPrefix(route, index: index, prefixes: &prefixes)
        let allowInsecureUpstream = route.bool("allowInsecureUpstream") ?? false
        let upstream = readUpstream(route, allowInsecure: allowInsecureUpstream)
        let auth = readAuth(route, context: context)
        let headers = route.object("headers").flatMap(readHeaders)
        let timeout = route.timeout("timeoutSeconds")
        let idleTimeout = route.timeout("idleTimeoutSeconds")
        let methods = readMethods(route)
        let forwardedHeaders = route.bool("forwardedHeaders") ?? false
        let tls = route.object("tls").flatMap(readTLS)
        let requiredHeader = route.object("requireHeader").flatMap(readRequiredHeader)
        let tokenType = readRouteTokenType(route, auth: auth, context: context)
        let upstreamProtocol = readUpstreamProtocol(route)

        guard let prefix, let upstream, let auth, let tokenType, let upstreamProtocol else { return nil }
        return Route(
            prefix: prefix,
            upstream: upstream,
            auth: auth,
            headers: headers ?? .empty,
            timeout: timeout,
            idleTimeout: idleTimeout,
            methods: methods,
            allowInsecureUpstream: allowInsecureUpstream,
            forwardedHeaders: forwardedHeaders,
            tls: TLSSettings(caFile: tls?.caFile ?? context.globalTLS.caFile),
            requiredHeaders: [context.requiredHeader, requiredHeader].compactMap { $0 },
            tokenType: tokenType,
            upstreamProtocol: upstreamProtocol
        )
    }

    /// A route's `upstreamProtocol`: `http/1.1` when absent, today's behaviour for every route that does not ask.
    private func readUpstreamProtocol(_ route: ObjectReader) -> UpstreamProtocol? {
        guard route.contains("upstreamProtocol") else { return .http1 }
        return route.choice("upstreamProtocol")
    }

    /// A route's `tokenType` (RFC 9449 §7.1): `auto` when absent. A route can only ask for what its token can be:
    /// `dpop` needs an OAuth or `dev` account whose own `tokenType` lets the authorization server bind its tokens, and a route
    /// that sends no token, or a Firebase one, has nothing to present either way.
    private func readRouteTokenType(_ route: ObjectReader, auth: RouteAuth?, context: RouteContext)
        -> TokenTypePreference?
    {
        guard route.contains("tokenType") else { return .auto }
        guard let tokenType: TokenTypePreference = route.choice("tokenType") else { return nil }
        switch auth {
        case .none?:
            route.report("tokenType", "not used with \"auth\": \"none\" (no token is sent)")
            return nil
        case .firebaseID?, .providerAccess?:
            route.report("tokenType", "not used with the \"firebase\" flow (its tokens are bearer tokens)")
            return nil
        case .onBehalfOf?:
            if tokenType == .dpop {
                route.report(
                    "tokenType",
                    "\"dpop\" is not offered with \"auth\": \"on-behalf-of\" (the exchanged tokens are bearer tokens)")
                return nil
            }
        case .discover(let settings)?:
            // A route on the account's own authorization server presents the account's tokens, as a bearer route
            // does; one with a sign-in of its own proves its own key (RFC 9449) whatever the account does.
            if tokenType == .dpop, settings.usesAccount, context.flow != nil,
                context.accountTokenType ?? .bearer == .bearer
            {
                route.report(
                    "tokenType",
                    "\"dpop\" on a route whose authorization server is the account's needs DPoP-bound tokens, and the "
                        + "account asks for bearer tokens: set the account's \"tokenType\" to \"dpop\" or \"auto\"")
                return nil
            }
        case .bearer?:
            if tokenType == .dpop, context.flow != nil, context.accountTokenType ?? .bearer == .bearer {
                route.report(
                    "tokenType",
                    "\"dpop\" needs DPoP-bound tokens, and the account asks for bearer tokens: set the account's "
                        + "\"tokenType\" to \"dpop\" or \"auto\" (an OAuth or \"dev\" flow's)")
                return nil
            }
        case nil:
            break
        }
        return tokenType
    }

    private func readPrefix(_ route: ObjectReader, index: Int, prefixes: inout [String: Int]) -> String? {
        guard let prefix = route.string("prefix", required: true) else { return nil }
        if let problem = RoutePrefix.problem(with: prefix) {
            route.report("prefix", problem)
            return nil
        }
        if let first = prefixes[prefix] {
            route.report("prefix", "\"\(prefix)\" is already the prefix of routes[\(first)]")
            return nil
        }
        prefixes[prefix] = index
        return prefix
    }

    private func readUpstream(_ route: ObjectReader, allowInsecure: Bool) -> Upstream? {
        guard let text = route.string("upstream", required: true) else { return nil }
        let upstream: Upstream
        do {
            upstream = try Upstream(validating: text)
        } catch {
            route.report("upstream", error.message)
            return nil
        }
        // A token sent over plain http to another machine can be read by anyone on the path (SPEC §6.1).
        guard upstream.scheme == .https || upstream.isLoopback || allowInsecure else {
            route.report(
                "upstream",
                "must be an absolute https URL (http is allowed only for loopback hosts or with "
                    + "\"allowInsecureUpstream\": true)"
            )
            return nil
        }
        return upstream
    }

    /// `methods`: method tokens (RFC 9110 §9.1), uppercased; CONNECT and TRACE are refused.
    private func readMethods(_ route: ObjectReader) -> Set<String>? {
        guard let elements = route.array("methods") else { return nil }
        guard !elements.isEmpty else {
            route.report("methods", "must list at least one method (leave \"methods\" out to allow every method)")
            return nil
        }
        var methods: Set<String> = []
        for (index, element) in elements.enumerated() {
            let path = route.path("methods").index(index)
            guard let text = JSONValue.string(element, at: path, problems: problems) else { continue }
            let method = text.uppercased()
            if !URICharacters.isToken(text) {
                problems.report(path, "is not a valid method name (an RFC 9110 token)")
            } else if method == "CONNECT" {
                problems.report(path, "CONNECT is not allowed: the proxy does not open tunnels")
            } else if method == "TRACE" {
                problems.report(path, "TRACE is not allowed: it would echo the injected token back to the client")
            } else {
                methods.insert(method)
            }
        }
        return methods
    }
}

extension ConfigurationReader {
    /// `headers: {"set": {name: value}, "remove": [name]}`.
    func readHeaders(_ headers: ObjectReader) -> HeaderRules? {
        headers.rejectUnknownKeys(allowed: ConfigurationKeys.headers)
        var fields: [HeaderField] = []
        var setNames: [String: String] = [:]
        if let set = headers.object("set") {
            for name in set.keys {
                guard let value = set.value(name), isAllowedHeaderName(name, at: set.path(name)) else { continue }
                if let first = setNames[name.lowercased()] {
                    set.report(name, "sets the same header as \"\(first)\" (header names are case-insensitive)")
                    continue
                }
                setNames[name.lowercased()] = name
                guard let text = JSONValue.string(value, at: set.path(name), problems: problems) else { continue }
                if let problem = Self.headerValueProblem(text) {
                    set.report(name, problem)
                    continue
                }
                fields.append(HeaderField(name: name, value: text))
            }
        }
        var removed: [String] = []
        for (name, path) in headers.stringElements("remove", allowEmpty: true) ?? []
        where isAllowedHeaderName(name, at: path) {
            if setNames[name.lowercased()] != nil {
                problems.report(path, "is also in \"set\"; a header is either set or removed")
                continue
            }
            removed.append(name)
        }
        return HeaderRules(set: fields, remove: removed)
    }

    /// `requireHeader`: `{"name": …, "value": …}`, the value optional; the name a header the proxy does not manage.
    func readRequiredHeader(_ object: ObjectReader) -> RequiredHeader? {
        object.rejectUnknownKeys(allowed: ConfigurationKeys.requireHeader)
        guard let name = object.nonEmptyString("name", required: true),
            isAllowedHeaderName(name, at: object.path("name"))
        else { return nil }
        guard object.contains("value") else { return RequiredHeader(name: name) }
        guard let value = object.nonEmptyString("value") else { return nil }
        if let problem = Self.headerValueProblem(value) {
            object.report("value", problem)
            return nil
        }
        return RequiredHeader(name: name, value: value)
    }

    /// A header name must be a token (RFC 9110 §5.1) and not one the proxy manages itself.
    private func isAllowedHeaderName(_ name: String, at path: JSONPath) -> Bool {
        guard URICharacters.isToken(name) else {
            problems.report(path, "is not a valid header name (an RFC 9110 token)")
            return false
        }
        if let reason = HeaderRules.reservation(of: name) {
            problems.report(path, reason)
            return false
        }
        return true
    }

    /// Control characters could end the header early and inject others (RFC 9110 §5.5); edges must be trimmed.
    /// The value itself is never repeated: it may be a credential.
    static func headerValueProblem(_ value: String) -> String? {
        if value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return "must not contain control characters such as CR, LF or NUL"
        }
        if let first = value.utf8.first, let last = value.utf8.last,
            [0x20, 0x09].contains(first) || [0x20, 0x09].contains(last)
        {
            return "must not start or end with spaces or tabs (RFC 9110 §5.5)"
        }
        return nil
    }
}

/// The rules for a route's `prefix`: a literal path that request paths are matched against byte for byte.
enum RoutePrefix {
    /// Why `prefix` cannot be a route prefix, or `nil` if it can.
    package static func problem(with prefix: String) -> String? {
        guard prefix.hasPrefix("/") else { return "must start with \"/\"" }
        guard prefix == "/" || !prefix.hasSuffix("/") else {
            return "must not end with \"/\" (write \"/graph\", not \"/graph/\")"
        }
        if prefix.contains(where: { "%?#".contains($0) }) {
            return "must not contain \"%\", \"?\" or \"#\" (a prefix is a literal, unencoded path)"
        }
        if let character = URICharacters.firstInvalidPathCharacter(prefix) {
            return "contains \(character), which is not allowed in a URL path (RFC 3986 §3.3)"
        }
        let segments = prefix.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if prefix != "/", segments.contains(where: \.isEmpty) { return "must not contain an empty segment (\"//\")" }
        if (try? RequestTarget.checkDotSegments(prefix[...], .uriSyntax)) == nil {
            return "must not contain \".\" or \"..\" segments"
        }
        if prefix == "/-" || prefix.hasPrefix("/-/") {
            return "\"/-\" and everything under \"/-/\" are reserved for the proxy's own endpoints"
        }
        return nil
    }
}
