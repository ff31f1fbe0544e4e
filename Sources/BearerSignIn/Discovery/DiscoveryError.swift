import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// Why a discovered route's authorization server could not be found or may not be used (SPEC §6.3), each with the one
/// line a person reads. Values that came from the upstream or its servers are quoted through ``shown(_:)``: a hostile
/// server chooses them.
public enum DiscoveryError: Error, Sendable, Equatable {
    /// The unauthenticated probe of the upstream got no answer.
    case upstreamUnreachable(upstream: String, reason: String)
    /// No protected-resource metadata at any URL tried (RFC 9728 §3).
    case noMetadata(tried: [MetadataAttempt])
    /// A document was found but is not the metadata it should be.
    case invalidMetadata(url: String, reason: String)
    /// The metadata describes another resource than the upstream (RFC 9728 §3.3).
    case resourceMismatch(resource: String, upstream: String)
    /// The metadata names no authorization server.
    case noAuthorizationServer(url: String)
    /// No authorization-server metadata at any URL built from the issuer (RFC 8414 §3, OIDC Discovery §4).
    case noAuthorizationServerMetadata(issuer: String, tried: [MetadataAttempt])
    /// The authorization server's metadata names another issuer than the one its URL was built from (RFC 8414
    /// §3.3): a mix-up attempt, or a misconfigured server.
    case issuerMismatch(expected: String, found: String, url: String)
    /// The authorization server does not advertise PKCE with S256 (RFC 7636; required by the MCP specification).
    case pkceUnsupported(issuer: String)
    /// An OAuth URL that is not https (http is allowed only on loopback hosts).
    case insecureURL(role: String, url: String)
    /// An OAuth URL that is not an absolute URL the proxy may use.
    case invalidURL(role: String, url: String)
    /// An OAuth URL that reaches loopback, a private network or a link-local address, named by a remote upstream.
    case privateAddress(role: String, url: String, address: String, reach: String)
    /// An OAuth URL whose host is an IPv6 literal with a zone (RFC 6874), which no OAuth URL may be
    /// (``OAuthURL/zonedAddress(in:)``).
    case zonedAddress(role: String, url: String, address: String)
    /// An OAuth URL whose host resolves to a link-local address without the zone that says which interface reaches
    /// it (RFC 4007 §11), where the route allows link-local addresses: no connection can be made to it.
    case linkLocalWithoutZone(role: String, url: String, address: String)
    /// A host in an OAuth URL that does not resolve.
    case hostNotFound(host: String)
    /// Dynamic client registration (RFC 7591) was refused or answered with no client.
    case registrationRefused(endpoint: String, reason: String)
    /// The resource accepts only DPoP-bound tokens (RFC 9728 `dpop_bound_access_tokens_required`), and the route's
    /// `tokenType` is `bearer`: a sign-in would only yield tokens the resource refuses.
    case dpopRequired(resource: String)

    /// One line for the person at the terminal or in a problem's `detail`.
    public var explanation: String {
        switch self {
        case .upstreamUnreachable(let upstream, let reason):
            "Could not probe \(upstream): \(reason)."
        case .noMetadata(let tried):
            "The upstream publishes no OAuth protected-resource metadata (RFC 9728); tried "
                + tried.map { "\(Self.shown($0.url)) (\($0.outcome))" }.joined(separator: ", ") + "."
        case .invalidMetadata(let url, let reason):
            "The metadata at \(Self.shown(url)) is not usable: \(reason)."
        case .resourceMismatch(let resource, let upstream):
            "The metadata describes the resource \(Self.shown(resource)), not this route's upstream \(upstream); "
                + "it is not used (RFC 9728 §3.3)."
        case .noAuthorizationServer(let url):
            "The metadata at \(Self.shown(url)) names no authorization server."
        case .noAuthorizationServerMetadata(let issuer, let tried):
            "The authorization server \(Self.shown(issuer)) publishes no metadata (RFC 8414 or OpenID Connect); "
                + "tried " + tried.map { "\(Self.shown($0.url)) (\($0.outcome))" }.joined(separator: ", ") + "."
        case .issuerMismatch(let expected, let found, let url):
            "The metadata at \(Self.shown(url)) names the issuer \(Self.shown(found)), not \(Self.shown(expected)); "
                + "it is not used (RFC 8414 §3.3: a mix-up attack or a misconfigured server)."
        case .pkceUnsupported(let issuer):
            "The authorization server \(Self.shown(issuer)) does not advertise PKCE with S256 "
                + "(code_challenge_methods_supported); the proxy does not sign in without it."
        case .insecureURL(let role, let url):
            "The \(role) \(Self.shown(url)) is not https (plain http is accepted only on loopback hosts)."
        case .invalidURL(let role, let url):
            "The \(role) \(Self.shown(url)) is not an absolute URL the proxy can use."
        case .privateAddress(let role, let url, let address, let reach):
            "The \(role) \(Self.shown(url)) reaches \(address), a \(reach) address, although the upstream is "
                + "remote; set \"discovery\": {\"allowPrivateAddresses\": true} on the route if that is intended."
        case .zonedAddress(let role, let url, let address):
            "The \(role) \(Self.shown(url)) names \(Self.shown(address)), an IPv6 address with a zone (RFC 6874), "
                + "which no OAuth URL may: a browser does not open it and it reaches a link of one interface of this "
                + "machine; name the server by a host name."
        case .linkLocalWithoutZone(let role, let url, let address):
            "The \(role) \(Self.shown(url)) reaches \(address), a link-local address without a zone (RFC 4007 §11), "
                + "so no interface is known to reach it through; resolve the name to an address with its zone "
                + "(fe80::1%eth0 in /etc/hosts) or to a routable one."
        case .hostNotFound(let host):
            "The host \(Self.shown(host)) does not resolve."
        case .registrationRefused(let endpoint, let reason):
            "Dynamic client registration at \(Self.shown(endpoint)) failed (\(Self.shown(reason))); register a "
                + "client with the authorization server and set \"discovery\": {\"clientId\": \"…\"} on the route."
        case .dpopRequired(let resource):
            "The resource \(Self.shown(resource)) accepts only DPoP-bound access tokens "
                + "(dpop_bound_access_tokens_required, RFC 9728), and the route's \"tokenType\" is \"bearer\": "
                + "remove it (\"auto\") or set \"dpop\"; nothing was signed in."
        }
    }

    /// A value from a server, quoted: printable ASCII only, at most 200 characters.
    static func shown(_ value: String) -> String {
        let cleaned = String(
            value.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        return "\"" + (cleaned.count > 200 ? String(cleaned.prefix(200)) + "…" : cleaned) + "\""
    }
}

/// One metadata URL tried, and what came of it (`HTTP 404`, `not JSON`, `found`, or why it could not be fetched).
public struct MetadataAttempt: Sendable, Equatable, Encodable {
    public var url: String
    public var outcome: String
    /// Whether asking again later may find it: no answer, or a 5xx or 429 (RFC 9110 §15.6, RFC 6585 §4). Not shown.
    var transient: Bool

    package init(url: String, outcome: String, transient: Bool = false) {
        self.url = url
        self.outcome = outcome
        self.transient = transient
    }

    private enum CodingKeys: String, CodingKey {
        case url
        case outcome
    }
}

extension DiscoveryError {
    /// Whether the failure may pass by itself (then the metadata stored with the sign-in is used): the upstream or a
    /// metadata URL did not answer, or answered 5xx or 429, or a host did not resolve. Every other failure is the
    /// servers' definitive answer — another resource or issuer, no PKCE, an unsafe URL — and nothing stored may stand
    /// in for it.
    var isTransient: Bool {
        switch self {
        case .upstreamUnreachable, .hostNotFound: true
        case .noMetadata(let tried), .noAuthorizationServerMetadata(_, let tried): tried.contains { $0.transient }
        case .invalidMetadata, .resourceMismatch, .noAuthorizationServer, .issuerMismatch, .pkceUnsupported,
            .insecureURL, .invalidURL, .zonedAddress, .linkLocalWithoutZone, .privateAddress, .registrationRefused,
            .dpopRequired:
            false
        }
    }
}

extension DiscoveryError {
    /// What a token request says when its endpoint could not be pinned: unavailable for now when its host did not
    /// resolve, else refused — nothing was sent.
    var tokenError: TokenError {
        isTransient
            ? .providerUnavailable(reason: explanation, retryAfterSeconds: 5) : .misconfigured(reason: explanation)
    }
}
