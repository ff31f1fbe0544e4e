import AsyncHTTPClient
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import Synchronization

/// The HTTP clients of one operation — one discovery, one registration — for its requests to ``PinnedURL``s: a client
/// per (host, judged address), made by the first request there and used by the operation's later ones, all shut down
/// when the operation ends (``PinnedHTTPClient/withConnections(_:)``), after which none is made.
///
/// Why not a client per request: an AsyncHTTPClient client builds its own TLS context — the system's trust roots
/// and the route's CA file read and parsed — within the connect timeout of its first connection. A discovery made
/// up to seven of them, and on a loaded machine one ran out of time ("connection not established in time").
///
/// Why a shared client still reaches only what was judged: a client's `dnsOverride` maps its one host to its one
/// address, so every connection it opens, or keeps alive and opens again, goes to that address under that name
/// (SNI, the certificate's check, `Host`); a request is sent only through the client of the host it names and the
/// address its URL was just judged on, so a name that resolves elsewhere at its next check gets another client,
/// never this one's connection. Nothing resolves a name here, and redirects are never followed (the
/// configuration's).
package final class PinnedConnections: Sendable {
    private let configuration: HTTPClient.Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let state = Mutex(State.open([:]))

    private enum State {
        case open([Key: HTTPClient])
        /// The operation ended: its clients are shut down, and a request that outlived it is refused.
        case closed
    }

    /// What a client may be used for: the name AsyncHTTPClient connects by (nil for a literal address, which it
    /// connects to as written) and the one address that name is overridden to.
    private struct Key: Hashable {
        var host: String?
        var address: IPAddress
    }

    package init(configuration: HTTPClient.Configuration, eventLoopGroup: any EventLoopGroup) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    /// Sends `request` to `url` (its `url` is set here) and hands the response to `read` while its connection is
    /// open; a body `read` leaves unread ends the request, and its connection, when the response is let go. The
    /// addresses are tried in order, the next only when a connection could not be made (refused, unreachable, or
    /// not in time), so the request was never sent; one deadline covers them all.
    func execute<Value>(
        _ request: HTTPClientRequest, to url: PinnedURL, timeout: TimeAmount, logger: Logger,
        read: (HTTPClientResponse) async throws -> Value
    ) async throws -> Value {
        var request = request
        request.url = url.text
        let host = try PinnedHTTPClient.overrideKey(for: url)
        let deadline = NIODeadline.now() + timeout
        var remaining = url.addresses[...]
        while let address = remaining.popFirst() {
            let http = try client(for: Key(host: host, address: address))
            do {
                return try await read(try await http.execute(request, deadline: deadline, logger: logger))
            } catch {
                guard !remaining.isEmpty, PinnedHTTPClient.neverConnected(error) else { throw error }
            }
        }
        // Not reached: a PinnedURL has at least one address, and the last one's failure is thrown above.
        throw HTTPClientError.connectTimeout
    }

    /// The client for `key`, made now if this operation has none yet.
    private func client(for key: Key) throws -> HTTPClient {
        try state.withLock { state in
            guard case .open(var clients) = state else { throw HTTPClientError.alreadyShutdown }
            if let known = clients[key] { return known }
            var configuration = configuration
            if let host = key.host { configuration.dnsOverride = [host: key.address.description] }
            let made = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: configuration)
            clients[key] = made
            state = .open(clients)
            return made
        }
    }

    /// Shuts every client down (a request still running is failed) and refuses any later request; the end of the
    /// operation.
    package func shutdown() async {
        let clients = state.withLock { state in
            defer { state = .closed }
            guard case .open(let clients) = state else { return [HTTPClient]() }
            return Array(clients.values)
        }
        for client in clients { try? await client.shutdown() }
    }

    /// How many clients this operation has made, for the tests.
    var clientCount: Int {
        state.withLock { state in
            guard case .open(let clients) = state else { return 0 }
            return clients.count
        }
    }
}
