import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The SSRF rule of discovery (docs/security.md, "Discovered routes"): a remote upstream's 401 and metadata choose URLs
/// the proxy then fetches or sends a browser to, so a hostile or compromised upstream could aim the proxy at this
/// machine (127.0.0.1, `localhost`), the local network, or a cloud metadata service (169.254.169.254). Unless the
/// upstream is itself on loopback, or the route sets `allowPrivateAddresses`, every OAuth URL must reach global
/// addresses only — judged on the literal address (every IPv6 form that embeds an IPv4 one included) and on every
/// address a name resolves to.
///
/// A judgement holds only for the connection made to the addresses judged: ``pin(_:role:)`` resolves once and
/// returns them as a ``PinnedURL``, which is what every request is sent to (``PinnedHTTPClient``), so a name that
/// resolves elsewhere a moment later (DNS rebinding) reaches nothing unjudged.
package struct AddressPolicy: Sendable {
    let allowsInternalAddresses: Bool
    let resolver: any HostResolver
    /// Where an address reaches: ``IPAddress/reach``. Tests stand one loopback address in for a global one, since
    /// no test may send anything off this machine.
    let reach: @Sendable (IPAddress) -> IPAddress.Reach

    package init(
        upstream: Upstream, settings: DiscoverySettings, resolver: any HostResolver,
        reach: @escaping @Sendable (IPAddress) -> IPAddress.Reach = { $0.reach }
    ) {
        allowsInternalAddresses = upstream.isLoopback || settings.allowPrivateAddresses
        self.resolver = resolver
        self.reach = reach
    }

    /// `url` resolved once, every address judged: what a request to it connects to.
    /// Throws ``DiscoveryError/privateAddress(role:url:address:reach:)`` when `url` may reach a non-global address.
    func pin(_ url: OAuthURL, role: String) async throws(DiscoveryError) -> PinnedURL {
        try await PinnedURL(url, role: role, policy: self)
    }

    /// A URL a server named (an endpoint kept from metadata), parsed as an ``OAuthURL`` and pinned.
    func pin(_ text: String, role: String) async throws(DiscoveryError) -> PinnedURL {
        try await pin(try OAuthURL(text, role: role), role: role)
    }

    /// Judges `url` now, for a URL that is not fetched now (an endpoint found in metadata, or where a browser goes):
    /// a request to it later pins it again, at that time. Nothing to judge, nothing resolved, where internal
    /// addresses are allowed.
    package func check(_ url: OAuthURL, role: String) async throws(DiscoveryError) {
        guard !allowsInternalAddresses else { return }
        _ = try await pin(url, role: role)
    }
}
