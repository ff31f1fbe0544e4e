import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The SSRF rule of discovery (#25): a remote upstream's 401 and metadata choose URLs the proxy then fetches or
/// sends a browser to, so a hostile or compromised upstream could aim the proxy at this machine (127.0.0.1,
/// `localhost`), the local network, or a cloud metadata service (169.254.169.254). Unless the upstream is itself
/// on loopback, or the route sets `allowPrivateAddresses`, every OAuth URL must reach global addresses only —
/// judged on the literal address (every IPv6 form that embeds an IPv4 one included) and on every address a name
/// resolves to.
package struct AddressPolicy: Sendable {
    package let allowsInternalAddresses: Bool
    package let resolver: any HostResolver

    package init(upstream: Upstream, settings: DiscoverySettings, resolver: any HostResolver) {
        allowsInternalAddresses = upstream.isLoopback || settings.allowPrivateAddresses
        self.resolver = resolver
    }

    /// Throws ``DiscoveryError/privateAddress(role:url:address:reach:)`` when `url` may reach a non-global address.
    package func check(_ url: OAuthURL, role: String) async throws(DiscoveryError) {
        guard !allowsInternalAddresses else { return }
        let host = url.parts.host
        func refuse(_ address: String, _ reach: IPAddress.Reach) -> DiscoveryError {
            .privateAddress(role: role, url: url.text, address: address, reach: reach.rawValue)
        }
        if let literal = IPAddress(literal: host) {
            guard literal.reach == .global else { throw refuse(literal.description, literal.reach) }
            return
        }
        // RFC 6761 §6.3: `localhost` and every name under it are this machine, whatever a resolver says.
        if host == "localhost" || host.hasSuffix(".localhost") { throw refuse(host, .loopback) }
        for address in try await resolver.addresses(of: host) where address.reach != .global {
            throw refuse(address.description, address.reach)
        }
    }
}
