import BearerCodec
import BearerConfiguration
import BearerTokens

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a route's DPoP proofs (RFC 9449 §7) need besides the token and its key, fixed once per route: where its
/// requests go, as `htu` names it, and its origin's nonces (one per key, ``UpstreamNonce``). A route that presents its token as a bearer token only
/// (`"tokenType": "bearer"`) has none, and neither has one that sends no token.
///
/// A proof is made for every forwarded request, replays included, so each has its own `jti` (§11.1) and the
/// origin's latest nonce; it is never reused.
final class UpstreamProofs: Sendable {
    /// `scheme://authority` + the upstream's base path: `htu` is this and the request's path after the prefix, as
    /// the head sends it, without query (§4.2; fragments never reach a proxy).
    let targetPrefix: String
    /// Whether the base path is empty, so a request for the prefix itself goes to `/`.
    private let basePathIsEmpty: Bool
    let nonce: UpstreamNonce

    init(upstream: Upstream, nonce: UpstreamNonce) {
        targetPrefix = upstream.url
        basePathIsEmpty = upstream.basePath.isEmpty
        self.nonce = nonce
    }

    /// The `DPoP` field's value for a `method` request whose path after the prefix is `remainder`, presenting
    /// `token` (bound to `key`), now.
    func proof(method: String, remainder: Substring, token: AccessToken, key: DPoPKey) -> [UInt8] {
        let path: Substring = basePathIsEmpty && remainder.isEmpty ? "/" : remainder
        return key.proof(
            method: method, htu: targetPrefix + path, iat: Int64(Date().timeIntervalSince1970.rounded(.down)),
            accessTokenHash: token.proofHash, nonce: nonce.current(for: key.thumbprint))
    }

    /// The origin key nonces are kept by: `scheme://host:port` as the head's `Host` names it.
    static func origin(of upstream: Upstream) -> String {
        upstream.scheme.rawValue + "://" + upstream.hostHeader.lowercased()
    }
}
