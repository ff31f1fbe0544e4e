import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `/-/echo`: a diagnostic upstream that answers with what it received — method, path, query, headers, body length
/// and SHA-256 — and, in place of the `Authorization` value, the bearer token's decoded claims. The token itself is
/// never echoed, nor is the client key (SPEC §9: secrets never appear in output).
enum Echo {
    static func response(to request: LocalRequest) -> LocalResponse {
        var headers: [[String]] = []
        var authorization: Any = JSONNull()
        for (name, value) in request.head.headers {
            switch name.lowercased() {
            case "authorization":
                headers.append([name, "<redacted: see authorization.claims>"])
                authorization = describe(authorization: value)
            case "proxy-authorization", "x-bearer-proxy-key":
                headers.append([name, "<redacted>"])
            default:
                headers.append([name, value])
            }
        }
        let echo: [String: Any] = [
            "method": request.head.method.rawValue,
            "path": String(request.path),
            "query": request.query.map { String($0) } ?? JSONNull(),
            "version": "HTTP/\(request.head.version.major).\(request.head.version.minor)",
            "headers": headers,
            "authorization": authorization,
            "bodyLength": request.bodyLength,
            "bodySHA256": request.bodySHA256,
        ]
        return .json(echo)
    }

    /// The scheme and, for a JWT bearer token, its decoded claims (not verified: this is a mirror, not a judge).
    static func describe(authorization value: String) -> [String: Any] {
        let scheme = String(value.prefix { $0 != " " })
        guard let token = BearerCredentials.token(in: value) else { return ["scheme": scheme] }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let payload = Base64URL.decode(segments[1]),
            let claims = JSONObject.dictionary(payload)
        else { return ["scheme": scheme, "claims": JSONNull(), "note": "not a JWT"] }
        return ["scheme": scheme, "claims": claims]
    }
}
