import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// What the data plane answers on a discovered route (SPEC §6.3) before anything is forwarded: the metadata paths a
/// local client would start its own OAuth from are never forwarded nor answered (404), and — when the route has no
/// token cache of its own (a route that signs in at its own authorization server, without a state directory, where
/// `login ROUTE` stores its sign-in) — every other request gets a 401 naming `bearer-proxy login ROUTE` at once,
/// without contacting anything: no hung request, no browser. (With a cache, a route nobody signed in for gets the same
/// 401 from its flow, which reads the state directory only.)
package enum DiscoveredRouteGate {
    /// The answer to a request under `prefix` whose path continues with `remainder` (raw, as matched). A route
    /// whose authorization server is the account's own (`usesAccount`) needs no `login ROUTE` — it takes the
    /// account's tokens, and has a cache whenever the account has an OAuth client, `--no-persist` or not — so
    /// without a cache its 401 says what is missing instead of naming a command that would not help.
    package static func refusal(prefix: String, remainder: Substring, usesAccount: Bool = false) -> ProxyError {
        if isOAuthMetadata(remainder) { return .oauthMetadataNotForwarded(route: prefix) }
        guard usesAccount else { return .discoveredSignInRequired(route: prefix) }
        return .discoveredSignInRequired(
            route: prefix,
            reason: "it takes the account's tokens (\"authorizationServer\": \"account\"), and this proxy has no "
                + "account OAuth client whose tokens it could take.")
    }

    /// The resource path that a root-level metadata request names: `/mcp` for
    /// `/.well-known/oauth-protected-resource/mcp`, nil for any other path. RFC 9728 §3.1 and RFC 8414 §3.1 insert
    /// the well-known suffix between the host and the resource's path, so this — not a path under the route — is
    /// where an MCP client pointed at `http://localhost:8080/mcp` looks first. Judged as ``isOAuthMetadata(_:)``
    /// judges (escapes decoded, case ignored); only paths whose second byte is `.` or `%` are looked at, so the
    /// usual request costs one comparison.
    static func insertedResourcePath(_ path: Substring) -> String? {
        let bytes = path.utf8
        guard bytes.count > 12, let second = bytes.dropFirst().first,
            second == UInt8(ascii: ".") || second == UInt8(ascii: "%")
        else { return nil }
        let segments = decoded(path).split(separator: "/")
        guard segments.count >= 2, segments[0].lowercased() == ".well-known" else { return nil }
        let suffix = segments[1].lowercased()
        guard suffix.hasPrefix("oauth-") || suffix == "openid-configuration" else { return nil }
        return "/" + segments.dropFirst(2).joined(separator: "/")
    }

    /// The paths an OAuth client tries at a server's origin to start a sign-in of its own: the MCP authorization
    /// specification's fallbacks when no metadata is found (`/register`, `/authorize`, `/token`) and the
    /// authorization server's metadata at the root (RFC 8414 §3, OpenID Connect Discovery §4). Judged as
    /// ``isOAuthMetadata(_:)`` judges; asked only of a path no route matches.
    static func isClientOAuthFallback(_ path: Substring) -> Bool {
        let segments = decoded(path).lowercased().split(separator: "/")
        guard let first = segments.first else { return false }
        if segments.count == 1 { return first == "register" || first == "authorize" || first == "token" }
        return first == ".well-known"
            && (segments[1] == "oauth-authorization-server" || segments[1] == "openid-configuration")
    }

    /// `/.well-known/oauth-…` (RFC 8414, RFC 9728) and `/.well-known/openid-configuration`, judged as an upstream
    /// would read them: percent-escapes decoded, case ignored, empty segments skipped.
    static func isOAuthMetadata(_ remainder: Substring) -> Bool {
        let segments = decoded(remainder).lowercased().split(separator: "/")
        guard segments.count >= 2, segments[0] == ".well-known" else { return false }
        return segments[1].hasPrefix("oauth-") || segments[1] == "openid-configuration"
    }

    private static func decoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(), let h = high.hexDigitValue,
                let l = low.hexDigitValue
            else { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(UInt8(h << 4 | l))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
