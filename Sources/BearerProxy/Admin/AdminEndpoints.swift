import Foundation
import NIOHTTP1

/// The proxy's own endpoints under the reserved prefix `/-/` (SPEC §9): liveness, the diagnostic echo upstream, and
/// for the `dev` account the issuer's discovery document and keys.
public struct AdminEndpoints: Sendable {
    /// The reserved prefix; `routes.json` cannot route it.
    static let prefix = "/-/"

    let devIssuer: DevIssuer?

    public init(devIssuer: DevIssuer?) {
        self.devIssuer = devIssuer
    }

    /// Whether `path` belongs to the proxy rather than to a route.
    static func owns(_ path: Substring) -> Bool {
        path == "/-" || path.hasPrefix(prefix)
    }

    /// The answer to `request`.
    func response(to request: LocalRequest) -> Result<LocalResponse, ProxyError> {
        let path = request.path
        if path == "/-/echo" || path.hasPrefix("/-/echo/") {
            return .success(Echo.response(to: request))
        }
        guard request.head.method == .GET || request.head.method == .HEAD else {
            if ["/-/health", "/-/jwks.json", "/-/.well-known/openid-configuration"].contains(path) {
                return .failure(.methodNotAllowed(method: request.head.method.rawValue, allowed: ["GET", "HEAD"]))
            }
            return .failure(.reservedEndpointNotFound(path: String(path)))
        }
        switch path {
        case "/-/health":
            return .success(.json(["status": "ok"]))
        case "/-/jwks.json":
            guard let devIssuer else { break }
            return .success(
                LocalResponse(
                    status: .ok, contentType: "application/jwk-set+json", body: .init(bytes: devIssuer.jwksDocument)))
        case "/-/.well-known/openid-configuration":
            guard let devIssuer else { break }
            return .success(
                LocalResponse(
                    status: .ok, contentType: "application/json", body: .init(bytes: devIssuer.discoveryDocument)))
        default:
            break
        }
        return .failure(.reservedEndpointNotFound(path: String(path)))
    }
}
