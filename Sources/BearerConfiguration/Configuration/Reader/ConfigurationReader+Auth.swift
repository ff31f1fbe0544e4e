// A route's auth, token and scopes; readScopes also reads the firebase account's scopes.

import BearerHTTP
import BearerJSON

extension ConfigurationReader {
    /// The values of a route's `auth`.
    enum AuthKind: String, CaseIterable {
        case bearer
        case none
        case discover
        case onBehalfOf = "on-behalf-of"
    }

    /// The values of a route's `token` (firebase flow only).
    enum TokenKind: String, CaseIterable {
        case firebaseID = "firebase-id"
        case providerAccess = "provider-access"
    }

    /// `auth`, `token` and `scopes` together: which of them apply depends on the account's flow.
    func readAuth(_ route: ObjectReader, context: RouteContext) -> RouteAuth? {
        guard let kind: AuthKind = route.contains("auth") ? route.choice("auth") : .bearer else {
            _ = readScopes(route, "scopes", rejectOpenIDConnect: true)
            return nil
        }
        if kind != .discover, route.contains("discovery") {
            route.report("discovery", "only used with \"auth\": \"discover\"")
        }
        if kind != .onBehalfOf, route.contains("onBehalfOf") {
            route.report("onBehalfOf", "only used with \"auth\": \"on-behalf-of\"")
        }
        switch kind {
        case .onBehalfOf:
            return readOnBehalfOf(route, flow: context.flow).map(RouteAuth.onBehalfOf)
        case .discover:
            // The upstream's challenge or metadata names the scopes, and its own authorization server issues the
            // token: nothing of the account's applies.
            if route.contains("scopes") {
                route.report(
                    "scopes", "not used with \"auth\": \"discover\" (the upstream's challenge or metadata names them)")
            }
            if route.contains("token") {
                route.report(
                    "token", "not used with \"auth\": \"discover\" (the upstream's authorization server issues it)")
            }
            let settings = readDiscovery(route, flow: context.flow)
            guard !route.contains("scopes"), !route.contains("token") else { return nil }
            return settings.map(RouteAuth.discover)
        case .none:
            if route.contains("scopes") {
                route.report("scopes", "not used with \"auth\": \"none\" (no token is sent)")
            }
            if route.contains("token") { route.report("token", "not used with \"auth\": \"none\" (no token is sent)") }
            return RouteAuth.none
        case .bearer:
            if context.flow == .firebase { return readFirebaseAuth(route, context: context) }
            if route.contains("token"), context.flow != nil {
                route.report("token", "only used with the \"firebase\" flow")
            }
            return readBearerScopes(route, flow: context.flow).map(RouteAuth.bearer)
        }
    }

    private func readBearerScopes(_ route: ObjectReader, flow: AccountFlow?) -> ScopeSet? {
        let scopes = readScopes(route, "scopes", rejectOpenIDConnect: true)
        switch flow {
        case .staticToken?:
            // A fixed token has no scopes; a route may still name them, for the dev tools that display them.
            return route.contains("scopes") ? scopes : ScopeSet([])
        case .clientCredentials?, .managedIdentity?:
            guard let scopes else { return requireScopes(route) }
            // The client credentials grant only takes "{resource}/.default" (Microsoft identity platform); a managed
            // identity endpoint takes the resource alone, which is what comes before "/.default".
            guard scopes.scopes.count == 1, let scope = scopes.scopes.first, scope.hasSuffix("/.default") else {
                route.report(
                    "scopes",
                    "the \(flow?.rawValue ?? "") flow takes exactly one scope, \"{resource}/.default\" "
                        + "(e.g. [\"https://graph.microsoft.com/.default\"])"
                )
                return nil
            }
            return scopes
        case nil:
            // The account is invalid: whether scopes are required is unknown, so a missing list is not reported.
            return scopes
        default:
            return scopes ?? requireScopes(route)
        }
    }

    /// Reports a missing `scopes` (an invalid one is already reported) and gives up.
    private func requireScopes(_ route: ObjectReader) -> ScopeSet? {
        if !route.contains("scopes") {
            route.report("scopes", "is required: the scopes of the token this route sends, e.g. [\"User.Read\"]")
        }
        return nil
    }

    /// Firebase routes carry the Firebase ID token (no scopes) or the Microsoft token (a subset of the account's).
    private func readFirebaseAuth(_ route: ObjectReader, context: RouteContext) -> RouteAuth? {
        let token: TokenKind? = route.contains("token") ? route.choice("token") : .firebaseID
        switch token {
        case .firebaseID?:
            if route.contains("scopes") {
                route.report("scopes", "not used with \"token\": \"firebase-id\" (a Firebase ID token has no scopes)")
            }
            return .firebaseID
        case .providerAccess?:
            let scopes = readScopes(route, "scopes", rejectOpenIDConnect: true)
            if context.firebaseProvider == .password {
                route.report(
                    "token",
                    "\"provider-access\" needs \"provider\": \"microsoft.com\" "
                        + "(password sign-in has no Microsoft token)"
                )
                return nil
            }
            guard let accountScopes = context.firebaseScopes else { return nil }
            guard let scopes else { return route.contains("scopes") ? nil : .providerAccess(accountScopes) }
            // Firebase hands over one Microsoft token, issued for the account's scopes; a route can only use those.
            let missing = scopes.scopes.filter { !accountScopes.scopes.contains($0) }
            guard missing.isEmpty else {
                let listed = missing.map { "\"\($0)\"" }.joined(separator: ", ")
                route.report(
                    "scopes",
                    "\(listed) not in account.scopes; Firebase returns one Microsoft token, for the account's scopes"
                )
                return nil
            }
            return .providerAccess(scopes)
        case nil:
            _ = readScopes(route, "scopes", rejectOpenIDConnect: true)
            return nil
        }
    }
}

extension ConfigurationReader {
    /// A list of scopes: each a valid scope token, all for one resource. `nil` when absent or invalid.
    ///
    /// With `rejectOpenIDConnect`, `openid`, `profile`, `offline_access` and `email` are refused: sign-in adds
    /// them, and listing them would only make otherwise equal scope sets differ.
    func readScopes(_ object: ObjectReader, _ key: String, rejectOpenIDConnect: Bool) -> ScopeSet? {
        guard let elements = object.array(key) else { return nil }
        guard !elements.isEmpty else {
            object.report(key, "must list at least one scope")
            return nil
        }
        var scopes: [String] = []
        for (index, element) in elements.enumerated() {
            let path = object.path(key).index(index)
            guard let scope = JSONValue.string(element, at: path, problems: problems) else { continue }
            if let problem = ScopeSet.problem(with: scope) {
                problems.report(path, problem)
            } else if rejectOpenIDConnect, ScopeSet.openIDConnectScopes.contains(scope.lowercased()) {
                problems.report(
                    path, "\"\(scope)\" is an OpenID Connect scope, added automatically at sign-in; remove it")
            } else {
                scopes.append(scope)
            }
        }
        guard scopes.count == elements.count else { return nil }
        let set = ScopeSet(scopes)
        let resources = set.resources
        guard resources.count == 1 else {
            object.report(
                key,
                "spans \(resources.count) resources (\(resources.joined(separator: ", "))); the identity platform "
                    + "issues one token per resource — use one route per resource"
            )
            return nil
        }
        return set
    }
}
