/// The route a request path matched, and the part of the path after the route's prefix.
public struct RouteMatch: Sendable {
    public let route: Route
    /// The raw bytes after the prefix: `""` or starting with `/` (the whole path for the root route).
    public let remainder: Substring

    public init(route: Route, remainder: Substring) {
        self.route = route
        self.remainder = remainder
    }
}
