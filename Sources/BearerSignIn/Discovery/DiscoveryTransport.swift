import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// The HTTP that discovery does, behind one protocol so that its rules are tested without sockets and its
/// fetching with them (``DiscoveryClient``). Each request goes to a ``PinnedURL``: to the addresses that were
/// resolved, and judged, just before it.
package protocol DiscoveryTransport: Sendable {
    /// An unauthenticated `GET` of the upstream: its status and headers (the body is not read).
    func probe(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, headers: HTTPHeaders)
    /// A `GET` of a metadata document, redirects not followed, the body bounded.
    func fetch(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, body: [UInt8])
}
