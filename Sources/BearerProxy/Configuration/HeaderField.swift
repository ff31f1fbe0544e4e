/// One header a route sets on forwarded requests.
public struct HeaderField: Sendable, Hashable {
    /// As written in routes.json (header names are case-insensitive, RFC 9110 §5.1).
    public var name: String
    /// Free of control characters, so it can never split or smuggle a header.
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
