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
/// its ``PinnedURL``'s addresses only (``PinnedHTTPClient``).
public struct DiscoveryClient: DiscoveryTransport {
    package let http: PinnedHTTPClient
    package let logger: Logger
    /// The whole exchange; a server slower than this is reported, not waited for.
    package static let deadline: TimeAmount = .seconds(15)
    /// A metadata document is a few KiB.
    package static let maximumBodyBytes = 1 << 20

    /// - Parameter caFile: trusted beside the system's roots (the route's `tls.caFile`).
    public init(caFile: String?, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        http = PinnedHTTPClient(configuration: Self.configuration(caFile: caFile), eventLoopGroup: eventLoopGroup)
        self.logger = logger
    }

    /// The client configuration discovery expects — and the identity provider client too (with its longer
    /// `read`): `caFile` trusted beside the system's roots, no redirect followed, no retried connect, bodies as
    /// sent.
    public static func configuration(caFile: String?, read: TimeAmount = .seconds(15)) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        if let caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(caFile)]
            configuration.tlsConfiguration = tls
        }
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5), read: read)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        return configuration
    }

    package func probe(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, headers: HTTPHeaders) {
        do {
            // The body is never read: the client is shut down once the head is in, which ends the request (an
            // event stream would not end).
            return try await http.execute(
                HTTPClientRequest(url: url.text), to: url, timeout: Self.deadline, logger: logger
            ) { response in (Int(response.status.code), response.headers) }
        } catch {
            throw .upstreamUnreachable(upstream: url.text, reason: Self.describe(error))
        }
    }

    package func fetch(_ url: PinnedURL) async throws(DiscoveryError) -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url.text)
        request.headers.add(name: "accept", value: "application/json")
        do {
            return try await http.execute(request, to: url, timeout: Self.deadline, logger: logger) { response in
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
    package func register(
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
            (status, body) = try await http.execute(request, to: endpoint, timeout: Self.deadline, logger: logger) {
                response in
                (Int(response.status.code), Array(buffer: try await response.body.collect(upTo: Self.maximumBodyBytes)))
            }
        } catch {
            throw .registrationRefused(endpoint: endpoint.text, reason: Self.describe(error))
        }
        return try RegisteredClient.decode(status: status, body: body, endpoint: endpoint.text)
    }

    /// Never the library's own description: BoringSSL's carries its build path (issue #27).
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
