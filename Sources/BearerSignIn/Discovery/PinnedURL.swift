import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// A URL with the addresses its host resolved to — once — each judged by an ``AddressPolicy``: the only form in
/// which discovery and a discovered route's sign-in reach a server. ``PinnedHTTPClient`` connects to these addresses
/// and to nothing else, keeping the URL's host for TLS (SNI, the certificate's name) and the `Host` header, so the name
/// is never resolved a second time: a DNS answer that changes between the check and the connect (DNS rebinding: a
/// global address for the check, 127.0.0.1 for the connection) reaches nothing it was not judged on. The only
/// initializers resolve; no value of this type exists unresolved.
package struct PinnedURL: Sendable, Hashable {
    /// Exactly as written.
    package let text: String
    let parts: URLParts
    /// What the host resolved to, in the resolver's order (the connection tries them in turn); never empty. For a
    /// literal host, that address alone.
    package let addresses: [IPAddress]

    /// The port the connection goes to: the URL's, else the scheme's.
    var port: Int { parts.port ?? (parts.scheme == "https" ? 443 : 80) }

    /// `url` with its host resolved once and every address judged by `policy`: throws
    /// ``DiscoveryError/privateAddress(role:url:address:reach:)`` when one of them may not be reached (a name is
    /// judged by all its addresses, since the connection may use any of them), ``DiscoveryError/hostNotFound(host:)``
    /// when it resolves to nothing.
    init(_ url: OAuthURL, role: String, policy: AddressPolicy) async throws(DiscoveryError) {
        let host = url.parts.host
        func refuse(_ address: String, _ reach: IPAddress.Reach) -> DiscoveryError {
            .privateAddress(role: role, url: url.text, address: address, reach: reach.rawValue)
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: host) {
            addresses = [literal]
        } else {
            // RFC 6761 §6.3: `localhost` and every name under it are this machine, whatever a resolver says.
            if !policy.allowsInternalAddresses, host == "localhost" || host.hasSuffix(".localhost") {
                throw refuse(host, .loopback)
            }
            addresses = try await policy.resolver.addresses(of: host)
            guard !addresses.isEmpty else { throw .hostNotFound(host: host) }
        }
        for address in addresses {
            let reach = policy.reach(address)
            guard reach == .global || policy.allowsInternalAddresses else { throw refuse(address.description, reach) }
            // A link-local address is reached through one interface, named by its zone: without one, the connect
            // fails (EINVAL) with nothing to say why; said here instead.
            if address.isLinkLocalWithoutZone {
                throw .linkLocalWithoutZone(role: role, url: url.text, address: address.description)
            }
        }
        self.init(text: url.text, parts: url.parts, addresses: addresses)
    }

    /// The route's own upstream, resolved once and not judged: the upstream is the owner's choice, not a server's
    /// (the data plane forwards to it alike). A name that does not resolve leaves the upstream unreachable, in the
    /// words AsyncHTTPClient's failure had.
    init(upstream: Upstream, resolver: any HostResolver) async throws(DiscoveryError) {
        guard let parts = try? URLParts(parsing: upstream.url) else {
            throw .invalidURL(role: "upstream", url: upstream.url)
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(literal: parts.host) {
            addresses = [literal]
        } else {
            do {
                addresses = try await resolver.addresses(of: parts.host)
            } catch {
                throw .upstreamUnreachable(upstream: upstream.url, reason: ConnectionFailure.unresolved.explanation)
            }
            guard !addresses.isEmpty else {
                throw .upstreamUnreachable(upstream: upstream.url, reason: ConnectionFailure.unresolved.explanation)
            }
        }
        self.init(text: upstream.url, parts: parts, addresses: addresses)
    }

    private init(text: String, parts: URLParts, addresses: [IPAddress]) {
        self.text = text
        self.parts = parts
        self.addresses = addresses
    }
}
