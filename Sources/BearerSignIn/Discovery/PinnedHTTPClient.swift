import AsyncHTTPClient
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Requests to a ``PinnedURL`` that connect to its judged addresses only (DNS rebinding), over AsyncHTTPClient.
///
/// AsyncHTTPClient has no resolver hook (its `dnsResolver` is `system` or `randomized`), but its `dnsOverride`
/// maps a host name to the address it connects to while TLS still sends the name (SNI) and checks the certificate
/// against it, and the `Host` header still names it. An override is a client's configuration, so a client serves
/// one host at one judged address: an operation's requests share the clients of a ``PinnedConnections`` scoped to
/// it (``withConnections(_:)``), a lone request has one of its own (``execute(_:to:timeout:logger:read:)``), and
/// nothing resolves the name again.
///
/// Everything else is the configuration given (``DiscoveryClient/configuration(caFile:read:connect:)``): redirects
/// never followed, no retried connect, no decompression, its timeouts.
struct PinnedHTTPClient: Sendable {
    package let configuration: HTTPClient.Configuration
    package let eventLoopGroup: any EventLoopGroup

    init(configuration: HTTPClient.Configuration, eventLoopGroup: any EventLoopGroup) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    /// Runs `body` — one operation — with clients for its requests that it shares, shut down before this returns
    /// whatever `body` does: nothing outlives the operation.
    func withConnections<T, Failure: Error>(
        _ body: (PinnedConnections) async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let connections = PinnedConnections(configuration: configuration, eventLoopGroup: eventLoopGroup)
        let outcome: Result<T, Failure>
        do throws(Failure) {
            outcome = .success(try await body(connections))
        } catch {
            outcome = .failure(error)
        }
        await connections.shutdown()
        return try outcome.get()
    }

    /// A request that is an operation of its own: ``PinnedConnections/execute(_:to:timeout:logger:read:)`` over a
    /// client shut down before this returns, so no connection is kept.
    func execute<Value>(
        _ request: HTTPClientRequest, to url: PinnedURL, timeout: TimeAmount, logger: Logger,
        read: (HTTPClientResponse) async throws -> Value
    ) async throws -> Value {
        try await withConnections { connections in
            try await connections.execute(request, to: url, timeout: timeout, logger: logger, read: read)
        }
    }

    /// The name AsyncHTTPClient connects by for `url` — the host Foundation's `URL` reads from the text, as its
    /// `DeconstructedURL` does — which the override must name exactly, or the client would resolve it after all;
    /// nil for a literal address, which it connects to as it is. A host read otherwise than ``URLParts`` read it
    /// (another port, another host) is refused: the address judged would not be the one reached.
    static func overrideKey(for url: PinnedURL) throws -> String? {
        guard let parsed = URL(string: url.text), var host = parsed.host, !host.isEmpty else {
            throw HTTPClientError.invalidURL
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let defaultPort = url.parts.scheme == "https" ? 443 : 80
        guard host.lowercased() == url.parts.host, (parsed.port ?? defaultPort) == url.port else {
            throw HTTPClientError.invalidURL
        }
        return IPAddress(literal: url.parts.host) == nil ? host : nil
    }

    /// A failure to connect at all: nothing was sent, so the next address may be tried (a token request included).
    static func neverConnected(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError: error == .connectTimeout
        case let error as IOError: [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL].contains(error.errnoCode)
        case let error as NIOConnectionError: error.connectionErrors.allSatisfy { neverConnected($0.error) }
        case let error as ChannelError: if case .connectTimeout = error { true } else { false }
        default: false
        }
    }
}
