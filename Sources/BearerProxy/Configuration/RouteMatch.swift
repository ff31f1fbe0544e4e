/// The route a request path matched, and the part of the path after the route's prefix.
public struct RouteMatch: Sendable {
    public let route: Route
    /// The route's index in ``RouteTable/routes`` (routes.json order).
    public let position: Int
    /// The raw bytes after the prefix: `""` or starting with `/` (the whole path for the root route).
    public let remainder: Substring

    public init(route: Route, position: Int, remainder: Substring) {
        self.route = route
        self.position = position
        self.remainder = remainder
    }
}
