import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The client a discovered route's token requests speak as (SPEC §6.3): one configured on the route (with a secret from
/// the environment when the server registered it as confidential), the route's Client ID Metadata Document, or one
/// registered dynamically with this authorization server. Its secret is never printed.
struct DiscoveredClient: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    enum Kind: String, Sendable {
        case configured
        /// The route's Client ID Metadata Document: its https URL is the `client_id`, a public client.
        case metadataDocument = "metadata-document"
        case dynamic
    }

    /// Where a client with a secret puts it in a token request (RFC 6749 §2.3.1; RFC 8414 §2 names the methods).
    enum Authentication: String, Sendable, Equatable {
        /// HTTP Basic: what every server must accept, and RFC 8414's default when the metadata lists no method.
        case basic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form, for a server that lists only this method.
        case post = "client_secret_post"

        /// The method for a server whose metadata lists `supported` (`token_endpoint_auth_methods_supported`).
        init(supported: [String]?) {
            let methods = supported ?? []
            self = !methods.contains(Self.basic.rawValue) && methods.contains(Self.post.rawValue) ? .post : .basic
        }
    }

    package var id: String
    var secret: String?
    package var kind: Kind
    /// How `secret` is sent, when there is one.
    var authentication: Authentication

    package var description: String { "\(kind.rawValue) client \(id)\(secret == nil ? "" : " (secret: <redacted>)")" }

    var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "id": id, "secret": secret == nil ? "none" : "<redacted>", "kind": kind,
                "authentication": authentication,
            ], displayStyle: .struct)
    }

    /// HTTP Basic credentials (RFC 6749 §2.3.1) when the client has a secret sent that way.
    var basicCredentials: (id: String, secret: String)? {
        guard authentication == .basic else { return nil }
        return secret.map { (id, $0) }
    }

    /// What identifies the client in the form: `client_id` for a public client (RFC 6749 §3.2.1), with
    /// `client_secret` for `client_secret_post`; nothing for Basic.
    var formParameters: [(String, String)] {
        guard let secret else { return [("client_id", id)] }
        return authentication == .post ? [("client_id", id), ("client_secret", secret)] : []
    }

    init(id: String, secret: String? = nil, kind: Kind, authentication: Authentication = .basic) {
        self.id = id
        self.secret = secret
        self.kind = kind
        self.authentication = authentication
    }
}
