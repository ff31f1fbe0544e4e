import AsyncHTTPClient
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// ``DiscoveryTransport`` over AsyncHTTPClient, configured as the identity provider's client is: redirects never
/// followed (a metadata URL that redirects elsewhere is not the metadata it claims to be), connection attempts
/// not retried, no decompression, a deadline on every request and a bound on every body. Each request connects to
/// its ``PinnedURL``'s addresses only: over the clients of the operation it belongs to when made by
/// ``with(caFile:eventLoopGroup:logger:connect:_:)`` (one discovery), else over a client of its own
/// (``PinnedHTTPClient``).
public struct DiscoveryClient: DiscoveryTransport {
    let http: PinnedHTTPClient
    /// The clients this client's requests share, for as long as the operation that made it runs; nil: each request
    /// has one of its own.
    let connections: PinnedConnections?
    package let logger: Logger
    /// The whole exchange; a server slower than this is reported, not waited for.
    package static let deadline: TimeAmount = .seconds(15)
    /// A metadata document is a few KiB.
    static let maximumBodyBytes = 1 << 20
    /// How long a connection may take, TLS handshake included, before the next address is tried or the request
    /// fails.
    public static let connectTimeout: TimeAmount = .seconds(5)

    /// - Parameters:
    ///   - caFile: trusted beside the system's roots (the route's `tls.caFile`).
    ///   - connect: ``connectTimeout`` unless told (the tests give a loaded machine more).
    init(
        caFile: String?, eventLoopGroup: any EventLoopGroup, logger: Logger, connect: TimeAmount = connectTimeout
    ) {
        self.init(
            http: PinnedHTTPClient(
                configuration: Self.configuration(caFile: caFile, connect: connect), eventLoopGroup: eventLoopGroup),
            connections: nil, logger: logger)
    }

    private init(http: PinnedHTTPClient, connections: PinnedConnections?, logger: Logger) {
        self.http = http
        self.connections = connections
        self.logger = logger
    }

    /// Runs `body` — one operation, a discovery — with a client whose requests share a client per host and judged
    /// address (``PinnedConnections``), every one shut down before this returns.
    package static func with<T, Failure: Error>(
        caFile: String?, eventLoopGroup: any EventLoopGroup, logger: Logger, connect: TimeAmount = connectTimeout,
        _ body: (DiscoveryClient) async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let http = PinnedHTTPClient(
            configuration: configuration(caFile: caFile, connect: connect), eventLoopGroup: eventLoopGroup)
        return try await http.withConnections { (connections) async throws(Failure) -> T in
            try await body(DiscoveryClient(http: http, connections: connections, logger: logger))
        }
    }

    /// The client configuration discovery expects — and the identity provider client too (with its longer
    /// `read`): `caFile` trusted beside the system's roots, no redirect followed, no retried connect, bodies as
    /// sent.
    public static func configuration(
        caFile: String?, read: TimeAmount = .seconds(15), connect: TimeAmount = connectTimeout
    ) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        if let caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(caFile)]
            configuration.tlsConfiguration = tls
        }
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: connect, read: read)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        return configuration
    }

    /// `request` to `url`, over the operation's clients or a client of its own.
    private func execute<Value>(
        _ request: HTTPClientRequest, to url: PinnedURL, read: (HTTPClientResponse) async throws -> Value
    ) async throws -> Value {
        guard let connections else {
            return try await http.execute(request, to: url, timeout: Self.deadline, logger: logger, read: read)
        }
        return try await connections.execute(request, to: url, timeout: Self.deadline, logger: logger, read: read)
    }

    package func probe(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, headers: HTTPHeaders) {
        do {
            // The body is never read: the response let go once its head is in ends the request and closes its
            // connection (an event stream would not end).
            return try await execute(HTTPClientRequest(url: url.text), to: url) { response in
                (Int(response.status.code), response.headers)
            }
        } catch {
            throw .upstreamUnreachable(upstream: url.text, reason: Self.describe(error))
        }
    }

    package func fetch(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url.text)
        request.headers.add(name: "accept", value: "application/json")
        do {
            return try await execute(request, to: url) { response in
                guard response.status == .ok else { return (Int(response.status.code), []) }
                let body = try await response.body.collect(upTo: Self.maximumBodyBytes)
                return (200, Array(buffer: body))
            }
        } catch {
            throw .invalidMetadata(url: url.text, reason: Self.describe(error))
        }
    }

    /// Registers a public native client (RFC 7591 §3) at `endpoint` — a registration endpoint that discovery
    /// found and checked (``DiscoveredAuthorization/registrationEndpoint``), never one from elsewhere, pinned again
    /// for this request.
    func register(
        _ registration: ClientRegistrationRequest, at endpoint: PinnedURL
    ) async throws(DiscoveryError) -> RegisteredClient {
        var request = HTTPClientRequest(url: endpoint.text)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: registration.body))
        let status: Int
        let body: [UInt8]
        do {
            (status, body) = try await execute(request, to: endpoint) { response in
                (Int(response.status.code), Array(buffer: try await response.body.collect(upTo: Self.maximumBodyBytes)))
            }
        } catch {
            throw .registrationRefused(endpoint: endpoint.text, reason: Self.describe(error))
        }
        return try RegisteredClient.decode(status: status, body: body, endpoint: endpoint.text)
    }

    /// Never the library's own description: BoringSSL's carries its build path.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout:
            "no answer in time"
        case let error as HTTPClientError where error == .connectTimeout:
            ConnectionFailure.timedOut.explanation
        case is NIOTooManyBytesError:
            "larger than 1 MiB"
        case is HTTPClientError:
            "\(error)"
        default:
            ConnectionFailure(error).explanation
        }
    }
}
