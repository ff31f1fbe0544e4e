/// The rules for a route's `prefix`: a literal path that request paths are matched against byte for byte.
enum RoutePrefix {
    /// Why `prefix` cannot be a route prefix, or `nil` if it can.
    static func problem(with prefix: String) -> String? {
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
        if segments.contains(where: { $0 == "." || $0 == ".." }) { return "must not contain \".\" or \"..\" segments" }
        if prefix == "/-" || prefix.hasPrefix("/-/") {
            return "\"/-\" and everything under \"/-/\" are reserved for the proxy's own endpoints"
        }
        return nil
    }
}
