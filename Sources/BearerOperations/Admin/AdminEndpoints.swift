import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The proxy's own endpoints under the reserved prefix `/-/` (SPEC §9): liveness, the diagnostic echo upstream, and
/// for the `dev` account the issuer's discovery document and keys.
public struct AdminEndpoints: LocalEndpoints {
    /// The reserved prefix; `routes.json` cannot route it.
    package static let prefix = LocalEndpointPaths.prefix

    /// An answer now, or one that needs to wait (``LocalAnswer``).
    package typealias Answer = LocalAnswer

    package let devIssuer: DevIssuer?
    package let account: (any AccountView)?
    package let metrics: ProxyMetrics?
    package let requestCounts: (@Sendable () async -> [String: Int])?
    /// The listener and the checks in force, for `/-/status`.
    let access: AccessSummary?

    /// Endpoints for a running proxy: its account (for `status` and `ready`), its metrics, and how to count its
    /// requests per route (from every event loop).
    public init(
        account: (any AccountView)?, metrics: ProxyMetrics?,
        requestCounts: (@Sendable () async -> [String: Int])?, access: AccessSummary? = nil
    ) {
        devIssuer = account?.devIssuer
        self.account = account
        self.metrics = metrics
        self.requestCounts = requestCounts
        self.access = access
    }

    /// Only the dev issuer's documents (and health, echo).
    public init(devIssuer: DevIssuer?) {
        self.devIssuer = devIssuer
        account = nil
        metrics = nil
        requestCounts = nil
        access = nil
    }

    /// Whether `path` belongs to the proxy rather than to a route.
    static func owns(_ path: Substring) -> Bool {
        LocalEndpointPaths.owns(path)
    }

    /// The answer to `request`.
    package func response(to request: LocalRequest) -> Answer {
        let path = request.path
        if path == "/-/echo" || path.hasPrefix("/-/echo/") {
            return .now(Echo.response(to: request))
        }
        let known = [
            "/-/health", "/-/ready", "/-/status", "/-/metrics", "/-/jwks.json", "/-/.well-known/openid-configuration",
        ]
        guard request.head.method == .GET || request.head.method == .HEAD else {
            if known.contains(String(path)) {
                return .refused(.methodNotAllowed(method: request.head.method.rawValue, allowed: ["GET", "HEAD"]))
            }
            return .refused(.reservedEndpointNotFound(path: String(path)))
        }
        switch path {
        case "/-/health":
            return .now(.json(["status": "ok"]))
        case "/-/ready":
            guard let account else { break }
            return .later { await Readiness.check(account) }
        case "/-/status":
            guard let account else { break }
            let counts = requestCounts
            return .later {
                let report = StatusReport(account: account, requestCounts: await counts?(), access: access)
                return LocalResponse(status: .ok, contentType: "application/json", body: ByteBuffer(bytes: report.json))
            }
        case "/-/metrics":
            guard let metrics else { break }
            return .now(
                LocalResponse(
                    status: .ok, contentType: "text/plain; version=0.0.4; charset=utf-8",
                    body: ByteBuffer(bytes: metrics.render())))
        case "/-/jwks.json":
            guard let devIssuer else { break }
            return .now(
                LocalResponse(
                    status: .ok, contentType: "application/jwk-set+json", body: .init(bytes: devIssuer.jwksDocument)))
        case "/-/.well-known/openid-configuration":
            guard let devIssuer else { break }
            return .now(
                LocalResponse(
                    status: .ok, contentType: "application/json", body: .init(bytes: devIssuer.discoveryDocument)))
        default:
            break
        }
        return .refused(.reservedEndpointNotFound(path: String(path)))
    }
}

/// `/-/ready` (SPEC §9): the configuration is loaded and, for each route that sends a token, a token can be had
/// now — from the cache, or from the provider (single-flight and throttled like any other request, so a probe
/// never hammers it). 503 with the reasons otherwise.
enum Readiness {
    static func check(_ account: any AccountView) async -> LocalResponse {
        var problems: [[String: String]] = []
        // Each scope set as its routes present it (`tokenType`): a DPoP-bound token is ready for a route that sends
        // it with a proof, not for one that would send it as a bearer token.
        var seen: Set<String> = []
        let wanted = account.configuration.routes.routes.compactMap { route -> (ScopeSet, TokenTypePreference)? in
            guard let scopes = route.auth.tokenKey,
                seen.insert(scopes.description + " " + route.tokenType.rawValue).inserted
            else { return nil }
            return (scopes, route.tokenType)
        }
        for (scopes, presentation) in wanted {
            do {
                _ = try await account.tokens.accessToken(for: scopes, presentedAs: presentation)
            } catch {
                problems.append(["scopes": scopes.description, "reason": "\(error)"])
            }
        }
        guard problems.isEmpty else {
            var response = LocalResponse.json(
                ["status": "not ready", "problems": problems], status: .serviceUnavailable)
            response.headers.add(name: "retry-after", value: "5")
            return response
        }
        return .json(["status": "ready", "flow": account.configuration.account.flow.rawValue])
    }
}
