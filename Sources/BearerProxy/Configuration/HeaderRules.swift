/// The request headers a route adds or removes before forwarding (`"headers": {"set": {…}, "remove": […]}`).
public struct HeaderRules: Sendable, Hashable {
    /// Headers to set, replacing any the client sent; sorted by lowercased name.
    public var set: [HeaderField]
    /// Lowercased names of client headers to drop; sorted, no duplicates.
    public var remove: [String]

    /// Neither sets nor removes anything (the default).
    public static let empty = HeaderRules()

    public init(set: [HeaderField] = [], remove: [String] = []) {
        self.set = set.sorted { $0.name.lowercased() < $1.name.lowercased() }
        self.remove = Set(remove.map { $0.lowercased() }).sorted()
    }

    public var isEmpty: Bool { self.set.isEmpty && remove.isEmpty }

    /// Why a route may not set or remove `name`, or `nil` if it may.
    ///
    /// The proxy owns these headers: framing (RFC 9112 §6), hop-by-hop headers (RFC 9110 §7.6.1),
    /// `Host` (derived from the upstream) and `Authorization` (the injected token).
    static func reservation(of name: String) -> String? {
        switch name.lowercased() {
        case "authorization": "carries the injected token and cannot be set or removed here"
        case "host": "is set from the upstream URL and cannot be set or removed here"
        case "content-length", "transfer-encoding":
            "describes the message framing and cannot be set or removed here"
        case "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
            "trailer", "upgrade":
            "is a hop-by-hop header (RFC 9110 §7.6.1) and cannot be set or removed here"
        default: nil
        }
    }
}
