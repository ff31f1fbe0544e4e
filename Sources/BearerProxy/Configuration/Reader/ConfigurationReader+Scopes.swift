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
