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

/// Requests to a ``PinnedURL`` that connect to its judged addresses only (#25, DNS rebinding), over AsyncHTTPClient.
///
/// AsyncHTTPClient has no resolver hook (its `dnsResolver` is `system` or `randomized`), but its `dnsOverride`
/// maps a host name to the address it connects to while TLS still sends the name (SNI) and checks the certificate
/// against it, and the `Host` header still names it. An override is a client's configuration, so each request has
/// a client of its own whose override maps the URL's host to one judged address, shut down before the request
/// returns: no connection is kept or shared, and nothing resolves the name again. The few requests discovery and a
/// discovered sign-in make (metadata, registration, token, revocation) can spare a connection each.
///
/// Everything else is the configuration given (``DiscoveryClient/configuration(caFile:read:)``): redirects never
/// followed, no retried connect, no decompression, its timeouts.
package struct PinnedHTTPClient: Sendable {
    package let configuration: HTTPClient.Configuration
    package let eventLoopGroup: any EventLoopGroup

    package init(configuration: HTTPClient.Configuration, eventLoopGroup: any EventLoopGroup) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    /// Sends `request` to `url` (its `url` is set here) and hands the response to `read` while its connection is
    /// open. The addresses are tried in order, the next only when a connection could not be made (refused,
    /// unreachable, or not in time), so the request was never sent; one deadline covers them all.
    package func execute<Value>(
        _ request: HTTPClientRequest, to url: PinnedURL, timeout: TimeAmount, logger: Logger,
        read: (HTTPClientResponse) async throws -> Value
    ) async throws -> Value {
        var request = request
        request.url = url.text
        let override = try Self.overrideKey(for: url)
        let deadline = NIODeadline.now() + timeout
        var remaining = url.addresses[...]
        while let address = remaining.popFirst() {
            var configuration = configuration
            if let override { configuration.dnsOverride = [override: address.description] }
            let http = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: configuration)
            let outcome: Result<Value, any Error>
            do {
                let response = try await http.execute(request, deadline: deadline, logger: logger)
                outcome = .success(try await read(response))
            } catch {
                outcome = .failure(error)
            }
            try? await http.shutdown()
            switch outcome {
            case .success(let value): return value
            case .failure(let error) where !remaining.isEmpty && Self.neverConnected(error): continue
            case .failure(let error): throw error
            }
        }
        // Not reached: a PinnedURL has at least one address, and the last one's failure is thrown above.
        throw HTTPClientError.connectTimeout
    }

    /// The name AsyncHTTPClient connects by for `url` — the host Foundation's `URL` reads from the text, as its
    /// `DeconstructedURL` does — which the override must name exactly, or the client would resolve it after all;
    /// nil for a literal address, which it connects to as it is. A host read otherwise than ``URLParts`` read it
    /// (another port, another host) is refused: the address judged would not be the one reached.
    package static func overrideKey(for url: PinnedURL) throws -> String? {
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
    package static func neverConnected(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError: error == .connectTimeout
        case let error as IOError: [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL].contains(error.errnoCode)
        case let error as NIOConnectionError: error.connectionErrors.allSatisfy { neverConnected($0.error) }
        case let error as ChannelError: if case .connectTimeout = error { true } else { false }
        default: false
        }
    }
}
