import NIOHTTP1

/// Every failure the proxy answers itself, mapped to its status in one place (SPEC §8).
///
/// Upstream answers — including 4xx and 5xx — are never turned into a `ProxyError`: they pass through unchanged.
enum ProxyError: Error, Equatable {
    case noRoute(path: String)
    case methodNotAllowed(method: String, allowed: [String])
    case badRequest(detail: String)
    case reservedEndpointNotFound(path: String)
    case upstreamUnreachable(upstream: String, reason: String)
    case upstreamReset(upstream: String)
    case upstreamTimeout(upstream: String, seconds: Int64)
    case upstreamProtocolError(upstream: String, reason: String)
    case signInRequired(detail: String)
    case tokenUnavailable(detail: String, retryAfterSeconds: Int)
    case starting

    /// The status each case is answered with.
    var status: HTTPResponseStatus {
        switch self {
        case .noRoute, .reservedEndpointNotFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .badRequest: .badRequest
        case .upstreamUnreachable, .upstreamReset, .upstreamProtocolError: .badGateway
        case .upstreamTimeout: .gatewayTimeout
        case .signInRequired: .unauthorized
        case .tokenUnavailable, .starting: .serviceUnavailable
        }
    }

    /// RFC 9457 §3.1.1 `type`: a stable identifier per problem, documented in docs/configuration.md.
    var type: String {
        let slug: String
        switch self {
        case .noRoute: slug = "no-route"
        case .reservedEndpointNotFound: slug = "no-such-endpoint"
        case .methodNotAllowed: slug = "method-not-allowed"
        case .badRequest: slug = "bad-request"
        case .upstreamUnreachable: slug = "upstream-unreachable"
        case .upstreamReset: slug = "upstream-reset"
        case .upstreamTimeout: slug = "upstream-timeout"
        case .upstreamProtocolError: slug = "upstream-protocol-error"
        case .signInRequired: slug = "sign-in-required"
        case .tokenUnavailable: slug = "token-unavailable"
        case .starting: slug = "starting"
        }
        return "urn:bearer-proxy:problem:" + slug
    }

    var title: String {
        switch self {
        case .noRoute: "No route for this path"
        case .reservedEndpointNotFound: "No such proxy endpoint"
        case .methodNotAllowed: "Method not allowed on this route"
        case .badRequest: "Bad request"
        case .upstreamUnreachable: "Upstream unreachable"
        case .upstreamReset: "Upstream closed the connection"
        case .upstreamTimeout: "Upstream timed out"
        case .upstreamProtocolError: "Upstream sent an invalid response"
        case .signInRequired: "Sign-in required"
        case .tokenUnavailable: "Access token unavailable"
        case .starting: "Proxy is starting"
        }
    }

    var detail: String {
        switch self {
        case .noRoute(let path): "No route in routes.json matches \(path)."
        case .reservedEndpointNotFound(let path): "\(path) is not one of the proxy's own endpoints under /-/."
        case .methodNotAllowed(let method, let allowed):
            "\(method) is not allowed on this route; allowed: \(allowed.joined(separator: ", "))."
        case .badRequest(let detail): detail
        case .upstreamUnreachable(let upstream, let reason): "Could not connect to \(upstream): \(reason)."
        case .upstreamReset(let upstream): "\(upstream) closed the connection before answering."
        case .upstreamTimeout(let upstream, let seconds): "\(upstream) sent no response within \(seconds) s."
        case .upstreamProtocolError(let upstream, let reason): "\(upstream): \(reason)."
        case .signInRequired(let detail): detail + " Run: bearer-proxy login"
        case .tokenUnavailable(let detail, _): detail
        case .starting: "The proxy is still starting; try again in a moment."
        }
    }

    /// Headers the status calls for: `Allow` with 405 (RFC 9110 §15.5.6), `Retry-After` with 503 (§10.2.3).
    var extraHeaders: [(String, String)] {
        switch self {
        case .methodNotAllowed(_, let allowed): [("allow", allowed.joined(separator: ", "))]
        case .tokenUnavailable(_, let retryAfter): [("retry-after", String(retryAfter))]
        case .starting: [("retry-after", "1")]
        default: []
        }
    }

    /// Maps a token failure to the answer SPEC §7 asks for: 401 when a person must sign in, 503 otherwise.
    init(_ error: TokenError) {
        switch error {
        case .signInRequired(let reason): self = .signInRequired(detail: reason.isEmpty ? "Not signed in." : reason)
        case .providerUnavailable(let reason, let retryAfter):
            self = .tokenUnavailable(
                detail: "The identity provider is unavailable: \(reason).", retryAfterSeconds: retryAfter)
        case .notAvailable(let reason): self = .tokenUnavailable(detail: reason, retryAfterSeconds: 30)
        }
    }
}
