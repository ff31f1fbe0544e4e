/// A requested `scope` value taken apart the way the Microsoft identity platform does: OpenID Connect scopes
/// aside, every other scope belongs to a resource (`api://todo/ToDoList.Read` → `api://todo`; a bare scope such as
/// `User.Read` → Microsoft Graph).
struct FakeIdentityScopes: Sendable {
    /// The scopes that name no resource.
    static let openIDScopes: Set<String> = ["openid", "profile", "offline_access", "email"]
    /// The resource of bare scopes.
    static let graphResource = "https://graph.microsoft.com"

    /// Every scope, in request order.
    let all: [String]
    /// The resource scopes (the non-OpenID ones), in request order.
    let resourceScopes: [String]
    /// The distinct resources, in order of first appearance.
    let resources: [String]

    init(_ scope: String) {
        self.all = scope.split(separator: " ").map(String.init)
        self.resourceScopes = self.all.filter { !Self.openIDScopes.contains($0) }
        var resources: [String] = []
        for resource in self.resourceScopes.map(Self.resource(of:)) where !resources.contains(resource) {
            resources.append(resource)
        }
        self.resources = resources
    }

    /// Whether `name` was requested.
    func contains(_ name: String) -> Bool {
        self.all.contains(name)
    }

    /// Whether a resource scope is `{resource}/.default`.
    var includesDefault: Bool {
        self.resourceScopes.contains { $0.hasSuffix("/.default") }
    }

    /// The permission names (`scp`): the part after the resource.
    var permissions: [String] {
        self.resourceScopes.map(Self.permission(of:))
    }

    /// The resource a scope belongs to: everything before the last `/` that follows the scheme or the first
    /// segment; Microsoft Graph for a bare scope.
    static func resource(of scope: String) -> String {
        guard let slash = self.lastSeparator(in: scope) else { return self.graphResource }
        return String(scope[..<slash])
    }

    /// The permission part of a scope (the scope itself when it is bare).
    static func permission(of scope: String) -> String {
        guard let slash = self.lastSeparator(in: scope) else { return scope }
        return String(scope[scope.index(after: slash)...])
    }

    /// Whether the scopes in `filter` (space-separated) are all among `scopes` (the knobs' and counters' rule).
    static func matches(filter: String?, _ scopes: [String]) -> Bool {
        guard let filter else { return true }
        return Set(filter.split(separator: " ").map(String.init)).isSubset(of: Set(scopes))
    }

    private static func lastSeparator(in scope: String) -> String.Index? {
        guard let slash = scope.lastIndex(of: "/") else { return nil }
        if let scheme = scope.range(of: "://"), slash < scheme.upperBound { return nil }
        return slash
    }
}
