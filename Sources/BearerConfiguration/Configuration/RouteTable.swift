// RouteTable and RouteMatch, the answer its lookup gives.

import BearerHTTP
import BearerJSON

/// All routes, and the longest-prefix lookup that picks one for each request.
public struct RouteTable: Sendable {
    /// In the order of routes.json.
    public let routes: [Route]

    /// A route's prefix as bytes, longest first; the root route's prefix is empty so it matches every path.
    private struct Entry: Sendable {
        let prefix: [UInt8]
        /// The route's index in ``routes``.
        let position: Int
    }

    private let entries: [Entry]

    init(_ routes: [Route]) {
        self.routes = routes
        // Stable: with equal lengths (only possible for duplicates, which configuration rejects) the first wins.
        let ordered = routes.enumerated().sorted { lhs, rhs in
            lhs.element.prefix.utf8.count != rhs.element.prefix.utf8.count
                ? lhs.element.prefix.utf8.count > rhs.element.prefix.utf8.count : lhs.offset < rhs.offset
        }
        self.entries = ordered.map { position, route in
            Entry(prefix: route.prefix == "/" ? [] : Array(route.prefix.utf8), position: position)
        }
    }

    /// The route whose prefix is the longest whole-segment prefix of `path` (the raw path, no query).
    ///
    /// `/graph` matches `/graph` and `/graph/me` but never `/graphql`; `/` matches every path.
    /// Compares UTF-8 bytes and allocates nothing for native strings.
    public func match(path: Substring) -> RouteMatch? {
        let found: (index: Int, length: Int)?
        if let result = path.utf8.withContiguousStorageIfAvailable({ bytes in firstEntry(matching: bytes) }) {
            found = result
        } else {
            // Only bridged, non-UTF-8 strings get here; copying their bytes is the price of a foreign string.
            found = Array(path.utf8).withUnsafeBufferPointer { bytes in firstEntry(matching: bytes) }
        }
        guard let (index, length) = found else { return nil }
        let start = path.utf8.index(path.startIndex, offsetBy: length)
        return RouteMatch(position: entries[index].position, remainder: path[start...])
    }

    /// The index of the first (longest) entry matching, and how many bytes of the path its prefix covers.
    private func firstEntry(matching path: UnsafeBufferPointer<UInt8>) -> (index: Int, length: Int)? {
        guard path.first == UInt8(ascii: "/") else { return nil }
        // By index, reading each entry where it lies: iterating copied each entry out, a retain and a release of
        // its prefix for every route looked at, on every request.
        for index in entries.indices {
            let length = entries[index].prefix.count
            guard path.count >= length else { continue }
            if length < path.count, path[length] != UInt8(ascii: "/") { continue }
            if entries[index].prefix.withUnsafeBufferPointer({ prefix in prefix.elementsEqual(path[0..<length]) }) {
                return (index, length)
            }
        }
        return nil
    }
}

/// The route a request path matched, and the part of the path after the route's prefix. The route itself is
/// `routes[position]`: a copy of it here would cost a retain of each of its fields on every request.
public struct RouteMatch: Sendable {
    /// The route's index in ``RouteTable/routes`` (routes.json order).
    public let position: Int
    /// The raw bytes after the prefix: `""` or starting with `/` (the whole path for the root route).
    public let remainder: Substring

    public init(position: Int, remainder: Substring) {
        self.position = position
        self.remainder = remainder
    }
}
