import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOSSL

/// Where upstream connections go, how they are secured and which HTTP version they speak: the key of the connection
/// pool. Two routes of one configuration with the same host, port, CA file and `upstreamProtocol` share pooled
/// connections; the path plays no part. The version is part of the key so that a connection of one version is never
/// handed to an exchange that asked for another.
struct UpstreamOrigin: Hashable, Sendable {
    let host: String
    let port: Int
    let transport: UpstreamTransport
    /// The route's `upstreamProtocol`; `auto` only with TLS (in the clear there is no ALPN to ask, so it is HTTP/1.1).
    let version: UpstreamProtocol

    /// The origin of `route`. An `https` route's origin always carries a TLS context, made by `tls` for its CA
    /// file and the ALPN its version offers: no value of this type means "https without TLS" (SPEC §9), so nothing
    /// downstream can forget it.
    init(_ route: Route, tls: (_ caFile: String?, _ version: UpstreamProtocol) throws -> UpstreamTLS) rethrows {
        host = route.upstream.host
        port = route.upstream.port
        switch route.upstream.scheme {
        case .http:
            transport = .plain
            version = route.upstreamProtocol == .auto ? .http1 : route.upstreamProtocol
        case .https:
            transport = .tls(try tls(route.tls.caFile, route.upstreamProtocol))
            version = route.upstreamProtocol
        }
    }

    /// `scheme://host:port`, for messages.
    var display: String {
        "\(transport.scheme)://\(Authority.bracketed(host)):\(port)"
    }
}

/// How connections to an upstream are secured.
enum UpstreamTransport: Hashable, Sendable {
    case plain
    case tls(UpstreamTLS)

    var scheme: String {
        switch self {
        case .plain: "http"
        case .tls: "https"
        }
    }
}

/// The TLS client context for `https` upstreams with one CA file and one `upstreamProtocol`, made once per installed
/// configuration (building a context parses the trust store). Equal only to itself: a pooled connection verified under
/// one configuration's trust roots is never handed to an exchange of another.
final class UpstreamTLS: Hashable, Sendable {
    package let context: NIOSSLContext

    /// `version` decides what ALPN offers (RFC 7301): nothing for HTTP/1.1, as before there was a choice; only `h2`
    /// for HTTP/2 (RFC 9113 §3.2); both, in the order of preference, for `auto`.
    init(caFile: String?, version: UpstreamProtocol = .http1) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        // swift-nio-ssl ignores SSL_CERT_FILE (data-plane pitfall 9): a private CA must be configured here. It is
        // trusted beside the system's roots, as docs/configuration.md says, not instead of them.
        if let caFile { configuration.additionalTrustRoots = [.file(caFile)] }
        switch version {
        case .http1: break
        case .h2: configuration.applicationProtocols = [UpstreamALPN.h2]
        case .auto: configuration.applicationProtocols = [UpstreamALPN.h2, UpstreamALPN.http1]
        }
        context = try NIOSSLContext(configuration: configuration)
    }

    /// The TLS handler of a new connection to `host`, verifying its certificate against ``serverName(for:)``: one
    /// place for the rule, whichever HTTP version the connection then speaks.
    func clientHandler(for host: String) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: Self.serverName(for: host))
    }

    /// The name to send in TLS SNI and to verify the certificate against. RFC 6066 §3 forbids IP literals in SNI;
    /// with nil, swift-nio-ssl verifies the certificate's IP addresses against the peer's address instead.
    static func serverName(for host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    package static func == (lhs: UpstreamTLS, rhs: UpstreamTLS) -> Bool { lhs === rhs }

    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
