import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOHTTP1

/// Every failure the proxy answers itself, mapped to its status in one place (SPEC §8).
///
/// Upstream answers — including 4xx and 5xx — are never turned into a `ProxyError`: they pass through unchanged.
package enum ProxyError: Error, Equatable {
    case noRoute(path: String)
    case methodNotAllowed(method: String, allowed: [String])
    case badRequest(detail: String)
    /// A method the proxy does not know (the request codec's ``BearerCodec/KnownMethod``).
    case methodNotImplemented
    /// An HTTP version other than 1.0 and 1.1.
    case versionNotSupported
    case uriTooLong
    case headersTooLarge
    case requestTimeout(detail: String)
    case forbiddenHost(host: String)
    case forbiddenOrigin(origin: String)
    case crossSiteRequest(site: String)
    case clientKeyRequired
    case requiredHeaderMissing(name: String)
    case reservedEndpointNotFound(path: String)
    case upstreamUnreachable(upstream: String, reason: String)
    case upstreamReset(upstream: String)
    case upstreamTimeout(upstream: String, seconds: Int64)
    /// The client's own deadline for the call (gRPC's `grpc-timeout`, `milliseconds` long) passed before `upstream`
    /// began to answer.
    case deadlineExceeded(upstream: String, milliseconds: Int64)
    /// The upstream took none of the request body for `seconds` (the body-stall limit) while it streamed.
    case upstreamStoppedReading(upstream: String, seconds: Int64)
    case upstreamProtocolError(upstream: String, reason: String)
    case signInRequired(detail: String)
    /// A discovered route (SPEC §6.3) with no usable sign-in: none stored, its refresh token refused, or its upstream
    /// now naming another authorization server; `reason` says which when the route's flow knows (it names the command).
    case discoveredSignInRequired(route: String, reason: String? = nil)
    /// A discovered route's upstream answered `403` `insufficient_scope` (RFC 6750 §3.1): a sign-in for `scopes` — what
    /// the route's token has and what the challenge asks for — is needed; a refresh never widens.
    case discoveredStepUpRequired(route: String, scopes: [String], note: String? = nil)
    /// A discovered route's upstream refused its token (`401`) and the proxy does not send the request again; `note`
    /// says why. The upstream's challenge is not passed on: the proxy signs in for the route, not its client.
    case discoveredTokenRefused(route: String, note: String)
    /// `/.well-known/oauth-*` under a discovered route: never forwarded, so a local client starts no OAuth.
    case oauthMetadataNotForwarded(route: String)
    /// A path no route matches that an OAuth client tries at the proxy's origin when it starts a sign-in of its own
    /// (MCP's fallbacks: `/register`, `/authorize`, `/token`, the root authorization-server metadata) while the
    /// configuration has discovered routes: the answer names the command that signs in for them instead.
    case clientOAuthNotOffered(path: String, routes: [String])
    case tokenUnavailable(detail: String, retryAfterSeconds: Int)
    case tokenMisconfigured(detail: String)
    /// An on-behalf-of route's request without the caller's own bearer token to exchange.
    case subjectTokenMissing(route: String)
    /// The authorization server refused the caller's token an on-behalf-of route exchanges; `claims` is the
    /// challenge it sent (base64 of its JSON, as Entra's `WWW-Authenticate` carries it), if any.
    case subjectTokenRefused(detail: String, claims: String?)
    /// Nobody consented to the API an on-behalf-of route exchanges the caller's token for.
    case consentRequired(detail: String)
    case starting

    /// The status each case is answered with.
    package var status: HTTPResponseStatus {
        switch self {
        case .noRoute, .reservedEndpointNotFound, .oauthMetadataNotForwarded, .clientOAuthNotOffered: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .badRequest: .badRequest
        case .methodNotImplemented: .notImplemented
        case .versionNotSupported: .httpVersionNotSupported
        case .uriTooLong: .uriTooLong
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .requestTimeout: .requestTimeout
        case .forbiddenHost, .forbiddenOrigin, .crossSiteRequest, .requiredHeaderMissing,
            .discoveredStepUpRequired:
            .forbidden
        case .clientKeyRequired: .unauthorized
        case .upstreamUnreachable, .upstreamReset, .upstreamProtocolError: .badGateway
        case .upstreamTimeout, .upstreamStoppedReading, .deadlineExceeded: .gatewayTimeout
        case .signInRequired, .discoveredSignInRequired, .discoveredTokenRefused: .unauthorized
        case .subjectTokenMissing, .subjectTokenRefused: .unauthorized
        case .consentRequired: .forbidden
        case .tokenUnavailable, .starting: .serviceUnavailable
        case .tokenMisconfigured: .internalServerError
        }
    }

    /// The gRPC status a gRPC client gets for this answer (its `grpc-status`): gRPC's own mapping of HTTP statuses
    /// (grpc/doc/http-grpc-status-mapping.md) — 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429,
    /// 502, 503 and 504 UNAVAILABLE — made exact where the proxy knows more: its own time limits DEADLINE_EXCEEDED,
    /// a method the route refuses UNIMPLEMENTED, a head too large RESOURCE_EXHAUSTED, a configuration fault INTERNAL.
    var grpcStatus: Int {
        switch self {
        case .upstreamTimeout, .upstreamStoppedReading, .requestTimeout, .deadlineExceeded: return 4
        case .methodNotAllowed, .methodNotImplemented: return 12
        case .uriTooLong, .headersTooLarge: return 8
        default: break
        }
        switch status.code {
        case 400: return 13
        case 401: return 16
        case 403: return 7
        case 404: return 12
        case 429, 502, 503, 504: return 14
        case 500: return 13
        default: return 2
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
        case .methodNotImplemented: slug = "method-not-implemented"
        case .versionNotSupported: slug = "version-not-supported"
        case .uriTooLong: slug = "uri-too-long"
        case .headersTooLarge: slug = "headers-too-large"
        case .requestTimeout: slug = "request-timeout"
        case .forbiddenHost: slug = "forbidden-host"
        case .forbiddenOrigin: slug = "forbidden-origin"
        case .crossSiteRequest: slug = "cross-site-request"
        case .clientKeyRequired: slug = "client-key-required"
        case .requiredHeaderMissing: slug = "required-header-missing"
        case .upstreamUnreachable: slug = "upstream-unreachable"
        case .upstreamReset: slug = "upstream-reset"
        case .upstreamTimeout, .upstreamStoppedReading: slug = "upstream-timeout"
        case .deadlineExceeded: slug = "deadline-exceeded"
        case .upstreamProtocolError: slug = "upstream-protocol-error"
        case .signInRequired, .discoveredSignInRequired, .discoveredTokenRefused: slug = "sign-in-required"
        case .discoveredStepUpRequired: slug = "step-up-required"
        case .oauthMetadataNotForwarded: slug = "oauth-metadata-not-forwarded"
        case .clientOAuthNotOffered: slug = "client-oauth-not-offered"
        case .tokenUnavailable: slug = "token-unavailable"
        case .tokenMisconfigured: slug = "token-misconfigured"
        case .subjectTokenMissing: slug = "subject-token-required"
        case .subjectTokenRefused: slug = "subject-token-refused"
        case .consentRequired: slug = "consent-required"
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
        case .methodNotImplemented: "Method not implemented"
        case .versionNotSupported: "HTTP version not supported"
        case .uriTooLong: "Request target too long"
        case .headersTooLarge: "Request header fields too large"
        case .requestTimeout: "Request not received in time"
        case .forbiddenHost: "Host not allowed"
        case .forbiddenOrigin: "Origin not allowed"
        case .crossSiteRequest: "Cross-site request refused"
        case .clientKeyRequired: "Client key required"
        case .requiredHeaderMissing: "Required header missing"
        case .upstreamUnreachable: "Upstream unreachable"
        case .upstreamReset: "Upstream closed the connection"
        case .upstreamTimeout, .upstreamStoppedReading: "Upstream timed out"
        case .deadlineExceeded: "Deadline exceeded"
        case .upstreamProtocolError: "Upstream sent an invalid response"
        case .signInRequired, .discoveredSignInRequired, .discoveredTokenRefused: "Sign-in required"
        case .discoveredStepUpRequired: "Sign-in with more scopes required"
        case .oauthMetadataNotForwarded: "OAuth metadata not forwarded"
        case .clientOAuthNotOffered: "The proxy signs in for its clients"
        case .tokenUnavailable: "Access token unavailable"
        case .tokenMisconfigured: "Identity provider rejected the configuration"
        case .subjectTokenMissing: "The caller's token is required"
        case .subjectTokenRefused: "The caller's token was refused"
        case .consentRequired: "Consent required"
        case .starting: "Proxy is starting"
        }
    }

    package var detail: String {
        switch self {
        case .noRoute(let path): "No route in routes.json matches \(path)."
        case .reservedEndpointNotFound(let path): "\(path) is not one of the proxy's own endpoints under /-/."
        case .methodNotAllowed(let method, let allowed):
            "\(method) is not allowed on this route; allowed: \(allowed.joined(separator: ", "))."
        case .badRequest(let detail): detail
        case .methodNotImplemented:
            "The proxy forwards the methods of RFC 9110, PATCH and WebDAV's; this one is none of them."
        case .versionNotSupported: "The proxy speaks HTTP/1.1 and HTTP/1.0 to its clients."
        case .uriTooLong: "The request target is longer than the proxy accepts."
        case .headersTooLarge: "The request's header section is larger than the proxy accepts."
        case .requestTimeout(let detail): detail
        case .forbiddenHost(let host):
            "Host \"\(Self.printable(host))\" is not this proxy's (DNS rebinding protection); add it to \"allowedHosts\" "
                + "in routes.json if it should be."
        case .forbiddenOrigin(let origin):
            "Requests from the web origin \"\(Self.printable(origin))\" are refused; add it to \"allowedOrigins\" in "
                + "routes.json if it should be allowed."
        case .crossSiteRequest(let site):
            "A browser request with Sec-Fetch-Site: \(Self.printable(site)) is refused: another site cannot use this "
                + "proxy's credentials."
        case .clientKeyRequired:
            "This proxy requires its client key: send \"Proxy-Authorization: Bearer <key>\" or "
                + "\"X-Bearer-Proxy-Key: <key>\" (the value of BEARER_PROXY_KEY)."
        case .requiredHeaderMissing(let name):
            "This route requires the header \(name) (\"requireHeader\" in routes.json), sent once; nothing was "
                + "forwarded and no token was used."
        case .upstreamUnreachable(let upstream, let reason): "Could not connect to \(upstream): \(reason)."
        case .upstreamReset(let upstream): "\(upstream) closed the connection before answering."
        case .upstreamTimeout(let upstream, let seconds): "\(upstream) sent no response within \(seconds) s."
        case .deadlineExceeded(let upstream, let milliseconds):
            "The call's own deadline (its grpc-timeout, \(milliseconds) ms) passed before \(upstream) answered."
        case .upstreamStoppedReading(let upstream, let seconds):
            "\(upstream) took none of the request body for \(seconds) s."
        case .upstreamProtocolError(let upstream, let reason): "\(upstream): \(reason)."
        case .signInRequired(let detail): detail + " Run: bearer-proxy login"
        case .discoveredSignInRequired(let route, let reason?):
            "There is no usable sign-in for \(route): " + reason
        case .discoveredSignInRequired(let route, nil):
            "There is no usable sign-in for \(route) (nobody has signed in, or its sign-in expired or was "
                + "revoked); its upstream names its own authorization server. Run: bearer-proxy login \(route)"
        case .discoveredStepUpRequired(let route, let scopes, let note):
            // Single quotes: the scopes come from the upstream's challenge, and a pasted command must not expand
            // anything in them (``StepUpScopes`` keeps only scope tokens without a quote or backslash).
            "The upstream of \(route) needs a token with more scopes (insufficient_scope, RFC 6750 §3.1); a refresh "
                + "never widens what was granted. " + (note.map(Self.stepUpNote) ?? "")
                + "Sign in for them: bearer-proxy login \(route) --scopes '" + scopes.joined(separator: " ") + "'"
        case .discoveredTokenRefused(let route, let note):
            "The upstream of \(route) refused the route's token (401) and \(note). The proxy signs in for this route "
                + "itself, so the upstream's challenge is not passed on; if this goes on, sign in again: "
                + "bearer-proxy login \(route)"
        case .oauthMetadataNotForwarded(let route):
            "The proxy signs in for \(route) itself, so its OAuth metadata is not forwarded: a client needs no "
                + "OAuth of its own."
        case .clientOAuthNotOffered(let path, let routes):
            "\(Self.printable(path)) is where an OAuth client starts a sign-in of its own; this proxy offers none: it "
                + "signs in for its routes itself, and a client needs no OAuth. "
                + (routes.count == 1
                    ? "Sign in once with: bearer-proxy login \(routes[0])"
                    : "Sign in once for the route the client uses (\(routes.joined(separator: ", "))): "
                        + "bearer-proxy login ROUTE")
                + ", then connect again without OAuth."
        case .tokenUnavailable(let detail, _): detail
        case .tokenMisconfigured(let detail): detail + " Check routes.json and the app registration."
        case .subjectTokenMissing(let route):
            "\(route) calls its upstream on behalf of the caller: send your own access token as \"Authorization: "
                + "Bearer <token>\". The proxy exchanges it at the authorization server and never forwards it."
        case .subjectTokenRefused(let detail, _):
            "The authorization server refused your token for the exchange: \(detail). Get a new token"
                + " (satisfying the claims challenge in WWW-Authenticate, when there is one) and send it again."
        case .consentRequired(let detail):
            "Nobody has consented to the API this route calls on your behalf: \(detail). Grant consent for the API "
                + "permission in the app registration (or have the user consent), then try again."
        case .starting: "The proxy is still starting; try again in a moment."
        }
    }

    /// Why `serve`'s own step-up (`"stepUp": "auto"`, SPEC §6.3) gave no wider token, as a sentence of the detail.
    private static func stepUpNote(_ note: String) -> String {
        "serve's step-up did not get through: \(note.hasSuffix(".") ? String(note.dropLast()) : note). "
    }

    /// A client-supplied value quoted in a message: short, printable ASCII only.
    private static func printable(_ value: String) -> String {
        let cleaned = String(
            value.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        return cleaned.count > 100 ? String(cleaned.prefix(100)) + "…" : cleaned
    }

    /// Headers the status calls for: `Allow` with 405 (RFC 9110 §15.5.6), `Retry-After` with 503 (§10.2.3).
    var extraHeaders: [(String, String)] {
        switch self {
        case .methodNotAllowed(_, let allowed): [("allow", allowed.joined(separator: ", "))]
        case .tokenUnavailable(_, let retryAfter): [("retry-after", String(retryAfter))]
        case .clientKeyRequired, .subjectTokenMissing: [("www-authenticate", #"Bearer realm="bearer-proxy""#)]
        case .subjectTokenRefused(_, let claims?):
            // Entra's claims challenge (Continuous Access Evaluation): the caller's MSAL takes `claims` as it comes.
            [
                (
                    "www-authenticate",
                    #"Bearer realm="bearer-proxy", error="insufficient_claims", claims=""# + claims + "\""
                )
            ]
        case .subjectTokenRefused(_, nil):
            [("www-authenticate", #"Bearer realm="bearer-proxy", error="invalid_token""#)]
        case .starting: [("retry-after", "1")]
        default: []
        }
    }
}
