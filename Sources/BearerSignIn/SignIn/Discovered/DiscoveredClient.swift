import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The client a discovered route's token requests speak as (#25 item 3): one configured on the route, or one
/// registered dynamically with this authorization server. Its secret, if the server issued one, is never printed.
package struct DiscoveredClient: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    package enum Kind: String, Sendable {
        case configured
        case dynamic
    }

    package var id: String
    package var secret: String?
    package var kind: Kind

    package var description: String { "\(kind.rawValue) client \(id)\(secret == nil ? "" : " (secret: <redacted>)")" }

    package var customMirror: Mirror {
        Mirror(
            self, children: ["id": id, "secret": secret == nil ? "none" : "<redacted>", "kind": kind],
            displayStyle: .struct)
    }

    /// HTTP Basic credentials (RFC 6749 §2.3.1) when the server issued a secret; a public client sends its id in
    /// the form instead (RFC 6749 §3.2.1).
    package var basicCredentials: (id: String, secret: String)? { secret.map { (id, $0) } }

    /// `client_id` in the form, for a public client.
    package var formParameters: [(String, String)] { secret == nil ? [("client_id", id)] : [] }

    package init(id: String, secret: String? = nil, kind: Kind) {
        self.id = id
        self.secret = secret
        self.kind = kind
    }
}
