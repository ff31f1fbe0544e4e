extension ScopeSet {
    /// OpenID Connect scopes the sign-in adds by itself; a route naming them would only split the token cache.
    static let openIDConnectScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    /// Why one scope string cannot be used, or `nil` if it can.
    static func problem(with scope: String) -> String? {
        // scope-token = 1*( %x21 / %x23-5B / %x5D-7E ): printable ASCII except space, '"' and '\' (RFC 6749 §3.3).
        let isToken = scope.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }
        guard !scope.isEmpty else { return "must not be empty" }
        guard isToken else {
            return "must be a single scope: printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)"
        }
        guard scope.contains("/") else { return nil }
        if let separator = scope.firstRange(of: "://"), !scope[separator.upperBound...].contains("/") {
            return "names a resource but no permission (did you mean \"\(scope)/.default\"?)"
        }
        let resource = Self.resource(of: scope)
        guard !resource.isEmpty else {
            return "must be \"{resource}/{permission}\" or a bare permission such as \"User.Read\""
        }
        guard !Self.permission(of: scope).isEmpty else {
            return "names a resource but no permission (did you mean \"\(resource)/.default\"?)"
        }
        return nil
    }
}
