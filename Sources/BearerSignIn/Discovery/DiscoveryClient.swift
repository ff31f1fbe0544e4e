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
/// not retried, no decompression, a deadline on every request and a bound on every body.
public struct DiscoveryClient: DiscoveryTransport {
    package let http: HTTPClient
    package let logger: Logger
    /// The whole exchange; a server slower than this is reported, not waited for.
    package static let deadline: TimeAmount = .seconds(15)
    /// A metadata document is a few KiB.
    package static let maximumBodyBytes = 1 << 20

    /// - Parameter http: a client made with ``configuration(caFile:)``; its owner shuts it down.
    public init(http: HTTPClient, logger: Logger) {
        self.http = http
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

    package func probe(_ url: String) async throws(DiscoveryError) -> (status: Int, headers: HTTPHeaders) {
        do {
            // The body is never read: dropping the response ends the request (an event stream would not end).
            let response = try await http.execute(HTTPClientRequest(url: url), timeout: Self.deadline, logger: logger)
            return (Int(response.status.code), response.headers)
        } catch {
            throw .upstreamUnreachable(upstream: url, reason: Self.describe(error))
        }
    }

    package func fetch(_ url: String) async throws(DiscoveryError) -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "accept", value: "application/json")
        do {
            let response = try await http.execute(request, timeout: Self.deadline, logger: logger)
            guard response.status == .ok else { return (Int(response.status.code), []) }
            let body = try await response.body.collect(upTo: Self.maximumBodyBytes)
            return (200, Array(buffer: body))
        } catch {
            throw .invalidMetadata(url: url, reason: Self.describe(error))
        }
    }

    /// Registers a public native client (RFC 7591 §3) at `endpoint` — a registration endpoint that discovery
    /// found and checked (``DiscoveredAuthorization/registrationEndpoint``), never one from elsewhere.
    package func register(
        _ registration: ClientRegistrationRequest, at endpoint: String
    ) async throws(DiscoveryError) -> RegisteredClient {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: registration.body))
        let status: Int
        let body: [UInt8]
        do {
            let response = try await http.execute(request, timeout: Self.deadline, logger: logger)
            status = Int(response.status.code)
            body = Array(buffer: try await response.body.collect(upTo: Self.maximumBodyBytes))
        } catch {
            throw .registrationRefused(endpoint: endpoint, reason: Self.describe(error))
        }
        return try RegisteredClient.decode(status: status, body: body, endpoint: endpoint)
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
