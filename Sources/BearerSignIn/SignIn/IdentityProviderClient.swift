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
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The control plane's HTTP client: token endpoint requests and OpenID Connect discovery, over AsyncHTTPClient on
/// the proxy's event loops (SPEC §3).
///
/// Configured for an identity provider, not a browser: redirects are never followed (a token request must not
/// be re-sent elsewhere), connection establishment is not retried for seconds (a provider that refuses
/// connections is reported at once — data-plane pitfall 10), and every request has a deadline.
public final class IdentityProviderClient: Sendable {
    let http: HTTPClient
    /// The same configuration for requests to a ``PinnedURL`` (a discovered route's authorization server, SPEC §6.3):
    /// each connects to its judged addresses only.
    let pinned: PinnedHTTPClient
    private let logger: Logger
    private let discovered = Mutex<[String: ProviderEndpoints]>([:])
    /// The whole exchange, connect included; a provider slower than this is reported unavailable.
    package static let deadline: TimeAmount = .seconds(30)
    /// Token endpoint answers larger than this are refused (a real one is a few KiB).
    static let maximumResponseBytes = 1 << 20

    /// - Parameters:
    ///   - caFile: the configuration's global `tls.caFile`, trusted beside the system's roots (an identity
    ///     provider behind a private CA).
    ///   - connect: ``DiscoveryClient/connectTimeout`` unless told (the tests give a loaded machine more).
    public init(
        eventLoopGroup: any EventLoopGroup, logger: Logger, caFile: String? = nil,
        connect: TimeAmount = DiscoveryClient.connectTimeout
    ) {
        let configuration = DiscoveryClient.configuration(caFile: caFile, read: .seconds(30), connect: connect)
        http = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: configuration)
        pinned = PinnedHTTPClient(configuration: configuration, eventLoopGroup: eventLoopGroup)
        self.logger = logger
    }

    /// Releases the client's connections; call once, at shutdown.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// The provider's endpoints: Microsoft's v2.0 paths under an authority, or the issuer's discovery document
    /// (OpenID Connect Discovery 1.0 §4), fetched once and kept.
    package func endpoints(for endpoint: IdentityEndpoint) async throws(TokenError) -> ProviderEndpoints {
        switch endpoint {
        case .authority(let authority):
            return ProviderEndpoints(microsoftAuthority: authority)
        case .issuer(let issuer):
            if let known = discovered.withLock({ $0[issuer] }) { return known }
            let url =
                issuer.hasSuffix("/")
                ? issuer + ".well-known/openid-configuration"
                : issuer + "/.well-known/openid-configuration"
            let (status, _, body) = try await send(HTTPClientRequest(url: url))
            guard status == 200, let document = ProviderEndpoints(discovery: body) else {
                throw status >= 500
                    ? .providerUnavailable(reason: "discovery at \(url) answered \(status)", retryAfterSeconds: 5)
                    : .misconfigured(reason: "no OpenID Connect discovery document at \(url) (HTTP \(status))")
            }
            discovered.withLock { $0[issuer] = document }
            return document
        }
    }

    /// POSTs a form to a token endpoint and decodes the answer.
    ///
    /// - Parameters:
    ///   - basicCredentials: client id and secret for HTTP Basic (RFC 6749 §2.3.1), when used.
    ///   - dpop: the sign-in's DPoP binding when its token requests carry proofs (RFC 9449 §5).
    func requestToken(
        at url: String, form: [(String, String)], basicCredentials: (id: String, secret: String)? = nil,
        dpop: DPoPBinding? = nil
    ) async throws(TokenEndpointCallFailure) -> TokenResponse {
        try await requestToken(url, form: form, basicCredentials: basicCredentials, to: nil, dpop: dpop)
    }

    /// POSTs a form to a discovered route's token endpoint, connecting to the addresses it was judged on.
    func requestToken(
        at endpoint: PinnedURL, form: [(String, String)], basicCredentials: (id: String, secret: String)? = nil,
        dpop: DPoPBinding? = nil
    ) async throws(TokenEndpointCallFailure) -> TokenResponse {
        try await requestToken(endpoint.text, form: form, basicCredentials: basicCredentials, to: endpoint, dpop: dpop)
    }

    private func requestToken(
        _ url: String, form: [(String, String)], basicCredentials: (id: String, secret: String)?,
        to endpoint: PinnedURL?, dpop: DPoPBinding?
    ) async throws(TokenEndpointCallFailure) -> TokenResponse {
        let key: DPoPKey?
        do {
            key = try dpop?.key()
        } catch {
            throw .unreachable(error)
        }
        let answer: ProvedAnswer
        do {
            answer = try await post(
                url, form: form, basicCredentials: basicCredentials, to: endpoint, dpop: dpop, key: key)
        } catch {
            throw .unreachable(error)
        }
        do {
            var response = try Self.tokenResponse(status: answer.status, headers: answer.headers, body: answer.body)
            try Self.bind(&response, to: key)
            return response
        } catch .rejected(let failure) where failure.error == "use_dpop_nonce" && key != nil {
            throw .rejected(
                TokenEndpointFailure(
                    status: failure.status, error: failure.error,
                    summary: answer.challenged
                        ? "the authorization server refused the DPoP nonce it had just given; not asking a third time"
                        : "the authorization server asked for a DPoP nonce without giving a new one"))
        }
    }

    /// A form POSTed with a DPoP proof (when `dpop` and `key` are given), and the answer; `challenged` when it is the
    /// answer to the second attempt.
    private struct ProvedAnswer {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        var challenged: Bool
    }

    /// POSTs `form` to `url` — a token endpoint's or a pushed authorization request endpoint's, which answer a proof
    /// alike (RFC 9449 §5, §10.1) — with a fresh proof each time, keeping every `DPoP-Nonce` the server gives.
    /// RFC 9449 §8: a server that wants a nonce refuses the first proof with `use_dpop_nonce` and a `DPoP-Nonce`; the
    /// request is sent once more with it, and never a third time.
    private func post(
        _ url: String, form: [(String, String)], basicCredentials: (id: String, secret: String)?,
        to endpoint: PinnedURL?, dpop: DPoPBinding?, key: DPoPKey?
    ) async throws(TokenError) -> ProvedAnswer {
        var challenged = false
        while true {
            var request = Self.tokenRequest(url, form: form, basicCredentials: basicCredentials)
            if let dpop, let key {
                request.headers.add(name: "DPoP", value: dpop.proof(key: key, method: "POST", url: url))
            }
            let (status, headers, body) = try await send(request, to: endpoint)
            let freshNonce = dpop?.noteNonce(in: headers, from: url) ?? false
            guard key != nil, !challenged, freshNonce, status >= 400,
                TokenEndpointFailure(status: status, json: body, retryAfter: nil).error == "use_dpop_nonce"
            else { return ProvedAnswer(status: status, headers: headers, body: body, challenged: challenged) }
            challenged = true
        }
    }

    /// RFC 9449 §5: a token issued as `token_type` `DPoP` is bound to the key of the request's proof. One issued so
    /// to a request without a proof could be used by nobody: refused, rather than ever sent as a bearer token.
    private static func bind(_ response: inout TokenResponse, to key: DPoPKey?) throws(TokenEndpointCallFailure) {
        guard response.tokenType.lowercased() == "dpop" else { return }
        guard let key else {
            throw .rejected(
                TokenEndpointFailure(
                    status: 200, error: "unexpected_token_type",
                    summary: "the authorization server issued a DPoP-bound token to a request without a DPoP proof; "
                        + "set the account's \"tokenType\" to \"dpop\""))
        }
        response.boundKey = key.thumbprint
    }

    private static func tokenRequest(
        _ url: String, form: [(String, String)], basicCredentials: (id: String, secret: String)?
    ) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        if let basicCredentials {
            // RFC 6749 §2.3.1: each part is form-urlencoded before being joined and base64-encoded.
            let pair = FormEncoding.encode(basicCredentials.id) + ":" + FormEncoding.encode(basicCredentials.secret)
            request.headers.add(name: "authorization", value: "Basic " + Data(pair.utf8).base64EncodedString())
        }
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        return request
    }

    /// A token endpoint answer decoded: the token response, or the failure it describes.
    static func tokenResponse(
        status: Int, headers: HTTPHeaders, body: Data
    ) throws(TokenEndpointCallFailure) -> TokenResponse {
        if status == 200, let response = TokenResponse(json: body) { return response }
        let retryAfter = RetryAfter.seconds(headers.first(name: "retry-after"))
        throw .rejected(TokenEndpointFailure(status: status, json: body, retryAfter: retryAfter))
    }

    /// POSTs a form and returns the raw answer, for endpoints whose successful answers are not token responses
    /// (native authentication's `initiate` and `challenge`, device authorization, token revocation).
    package func postForm(to url: String, form: [(String, String)]) async throws(TokenError) -> (
        status: Int, headers: HTTPHeaders, body: Data
    ) {
        try await send(Self.formRequest(url, form: form), to: nil)
    }

    /// ``postForm(to:form:)`` to a discovered route's endpoint (revocation, pushed authorization requests),
    /// connecting to the addresses it was judged on.
    /// - Parameter basicCredentials: client id and secret for HTTP Basic (RFC 6749 §2.3.1), when used.
    /// - Parameter dpop: the sign-in's DPoP binding when its requests there carry proofs (a pushed authorization
    ///   request, RFC 9449 §10.1); a `use_dpop_nonce` refusal is answered once, as at the token endpoint.
    package func postForm(
        to endpoint: PinnedURL, form: [(String, String)], basicCredentials: (id: String, secret: String)? = nil,
        dpop: DPoPBinding? = nil
    ) async throws(TokenError) -> (status: Int, headers: HTTPHeaders, body: Data) {
        let answer = try await post(
            endpoint.text, form: form, basicCredentials: basicCredentials, to: endpoint, dpop: dpop,
            key: try dpop?.key())
        return (answer.status, answer.headers, answer.body)
    }

    private static func formRequest(_ url: String, form: [(String, String)]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        return request
    }

    /// GETs `url` with `headers` and returns the raw answer, for token endpoints that are not OAuth's (a managed
    /// identity endpoint takes its parameters in the query and answers its own JSON).
    func get(_ url: String, headers: HTTPHeaders) async throws(TokenError) -> (
        status: Int, headers: HTTPHeaders, body: Data
    ) {
        var request = HTTPClientRequest(url: url)
        request.headers = headers
        return try await send(request, to: nil)
    }

    func send(_ request: HTTPClientRequest) async throws(TokenError) -> (Int, HTTPHeaders, Data) {
        try await send(request, to: nil)
    }

    /// Sends `request` over the shared client, or to `endpoint`'s own addresses when it is pinned; the same
    /// deadline, body bound and messages either way.
    private func send(
        _ request: HTTPClientRequest, to endpoint: PinnedURL?
    ) async throws(TokenError) -> (Int, HTTPHeaders, Data) {
        let read = { (response: HTTPClientResponse) async throws -> (Int, HTTPHeaders, Data) in
            let body = try await response.body.collect(upTo: Self.maximumResponseBytes)
            return (Int(response.status.code), response.headers, Data(buffer: body))
        }
        do {
            guard let endpoint else {
                return try await read(try await http.execute(request, timeout: Self.deadline, logger: logger))
            }
            return try await pinned.execute(request, to: endpoint, timeout: Self.deadline, logger: logger, read: read)
        } catch {
            throw .providerUnavailable(reason: Self.describe(error, url: request.url), retryAfterSeconds: 5)
        }
    }

    private static func describe(_ error: any Error, url: String) -> String {
        let host = URL(string: url)?.host ?? "the identity provider"
        switch error {
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout:
            return "\(host) did not answer in time"
        case let error as HTTPClientError:
            return "\(host): \(Self.describe(error))"
        default:
            // Never the library's own description: BoringSSL's carries its build path.
            return "cannot reach \(host): \(ConnectionFailure(error).explanation)"
        }
    }

    /// AsyncHTTPClient's own errors: the connection ones in ``ConnectionFailure``'s words; the rest by their case
    /// name, which is all their description holds ("HTTPClientError.bodyLengthMismatch").
    private static func describe(_ error: HTTPClientError) -> String {
        switch error {
        case .connectTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout, .tlsHandshakeTimeout:
            ConnectionFailure.timedOut.explanation
        case .remoteConnectionClosed, .cancelled: ConnectionFailure.reset.explanation
        default: "\(error)"
        }
    }
}

/// Why a token endpoint call produced no token: the provider could not be reached, or it answered with an error.
enum TokenEndpointCallFailure: Error {
    case unreachable(TokenError)
    case rejected(TokenEndpointFailure)

    var tokenError: TokenError {
        switch self {
        case .unreachable(let error): error
        case .rejected(let failure): failure.tokenError
        }
    }
}

extension Data {
    fileprivate init(buffer: ByteBuffer) {
        self = buffer.withUnsafeReadableBytes { Data($0) }
    }
}

/// The `claims` parameter of a token request (OpenID Connect Core §5.5): the resource server's challenge merged
/// with the client's declared capabilities (`xms_cc`, e.g. `cp1` for continuous access evaluation — protocols.md
/// §9), as MSAL merges them.
enum ClaimsRequest {
    static func merged(challenge: String?, capabilities: [String]) -> String? {
        var root = challenge.flatMap { JSONObject.dictionary(Data($0.utf8)) } ?? [:]
        if challenge != nil && root.isEmpty, let challenge { return challenge }  // not JSON: pass as received
        if !capabilities.isEmpty {
            var accessToken = root["access_token"] as? [String: Any] ?? [:]
            accessToken["xms_cc"] = ["values": capabilities]
            root["access_token"] = accessToken
        }
        guard !root.isEmpty,
            let data = JSONObject.data(root)
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
