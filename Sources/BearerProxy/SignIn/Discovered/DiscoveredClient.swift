/// The client a discovered route's token requests speak as (#25 item 3): one configured on the route, or one
/// registered dynamically with this authorization server. Its secret, if the server issued one, is never printed.
struct DiscoveredClient: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    enum Kind: String, Sendable {
        case configured
        case dynamic
    }

    var id: String
    var secret: String?
    var kind: Kind

    var description: String { "\(kind.rawValue) client \(id)\(secret == nil ? "" : " (secret: <redacted>)")" }

    var customMirror: Mirror {
        Mirror(
            self, children: ["id": id, "secret": secret == nil ? "none" : "<redacted>", "kind": kind],
            displayStyle: .struct)
    }

    /// HTTP Basic credentials (RFC 6749 §2.3.1) when the server issued a secret; a public client sends its id in
    /// the form instead (RFC 6749 §3.2.1).
    var basicCredentials: (id: String, secret: String)? { secret.map { (id, $0) } }

    /// `client_id` in the form, for a public client.
    var formParameters: [(String, String)] { secret == nil ? [("client_id", id)] : [] }
}
