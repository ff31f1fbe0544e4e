import BearerHTTP
import BearerJSON

/// The scopes one access token is requested for, kept de-duplicated and sorted so that equal sets compare
/// equal and routes with the same scopes share one token.
public struct ScopeSet: Sendable, Hashable, CustomStringConvertible {
    /// The resource Microsoft assumes for a scope without one (`User.Read` means Microsoft Graph's).
    public static let defaultResource = "https://graph.microsoft.com"

    /// De-duplicated and sorted.
    public let scopes: [String]

    /// The resource the token is for (its `aud`), derived from the first scope; `nil` for an empty set.
    ///
    /// Validated sets from routes.json always have exactly one resource.
    public let resource: String?

    /// The scopes' hash, computed once: the token cache looks its tokens up by scope set on every proxied request,
    /// and hashing the strings each time would be ~1 % of one's CPU (docs/benchmarks.md).
    private let scopesHash: Int

    public init(_ scopes: some Sequence<String>) {
        self.scopes = Set(scopes).sorted()
        self.resource = self.scopes.first.map(Self.resource(of:))
        self.scopesHash = self.scopes.hashValue
    }

    /// Equal scopes (the resource follows from them).
    public static func == (lhs: ScopeSet, rhs: ScopeSet) -> Bool {
        lhs.scopesHash == rhs.scopesHash && lhs.scopes == rhs.scopes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scopesHash)
    }

    public var isEmpty: Bool { scopes.isEmpty }

    /// What each scope asks of its resource: `ToDoList.Read`, `.default`, `User.Read`.
    public var permissions: [String] { scopes.map(Self.permission(of:)) }

    /// The scopes separated by spaces, as the OAuth `scope` parameter carries them (RFC 6749 §3.3).
    public var description: String { scopes.joined(separator: " ") }

    /// Every distinct resource the scopes name, sorted; more than one means the set cannot be one token.
    package var resources: [String] { Set(scopes.map(Self.resource(of:))).sorted() }

    /// Microsoft's rule: everything before the last `/` (`api://todo/ToDoList.Read` → `api://todo`);
    /// a scope without `/` belongs to Microsoft Graph.
    package static func resource(of scope: String) -> String {
        guard let slash = scope.lastIndex(of: "/") else { return defaultResource }
        return String(scope[..<slash])
    }

    /// Everything after the last `/`, or the whole scope when it has none.
    static func permission(of scope: String) -> String {
        guard let slash = scope.lastIndex(of: "/") else { return scope }
        return String(scope[scope.index(after: slash)...])
    }
}

extension ScopeSet {
    /// OpenID Connect scopes the sign-in adds by itself; a route naming them would only split the token cache.
    package static let openIDConnectScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    /// Why one scope string cannot be used, or `nil` if it can.
    package static func problem(with scope: String) -> String? {
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
