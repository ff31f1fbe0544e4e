import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// Which client identity a sign-in for a discovered route would use, in the order SPEC §6.3 gives: a client configured
/// on the route, a Client ID Metadata Document when the server supports one and the route names one, dynamic
/// registration (RFC 7591) when the server offers it, else nothing — with what to configure.
public enum ClientRegistration: Sendable, Equatable {
    case configured(clientID: String)
    case metadataDocument(url: String)
    case dynamic(endpoint: String)
    case unavailable

    static func choose(
        settings: DiscoverySettings, server: AuthorizationServerMetadata, registrationEndpoint: String?
    )
        -> ClientRegistration
    {
        if let clientID = settings.clientID { return .configured(clientID: clientID) }
        if let document = settings.clientMetadataDocument, server.clientIDMetadataDocumentSupported == true {
            return .metadataDocument(url: document)
        }
        if let registrationEndpoint { return .dynamic(endpoint: registrationEndpoint) }
        return .unavailable
    }

    /// `configured`, `metadata-document`, `dynamic` or `none`: the word `discover --json` and `status` show.
    public var kind: String {
        switch self {
        case .configured: "configured"
        case .metadataDocument: "metadata-document"
        case .dynamic: "dynamic"
        case .unavailable: "none"
        }
    }

    /// One line on what a sign-in would do, or what to configure.
    public var explanation: String {
        switch self {
        case .configured(let clientID): "the client configured on the route (\(clientID))"
        case .metadataDocument(let url): "the route's Client ID Metadata Document \(url)"
        case .dynamic(let endpoint): "dynamic client registration (RFC 7591) at \(DiscoveryError.shown(endpoint))"
        case .unavailable:
            "none: the server offers neither dynamic registration nor (for this route) a Client ID Metadata "
                + "Document; register a client with it and set \"discovery\": {\"clientId\": \"…\"} on the route"
        }
    }
}
