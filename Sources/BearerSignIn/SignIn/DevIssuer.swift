import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The embedded `dev` account: a local issuer that mints ES256 JWT access tokens, so the whole loop works offline.
///
/// Tokens look like Microsoft identity platform v2.0 access tokens (`aud` is the scopes' resource, `scp` the
/// permissions), and a local API can validate them with any JWT library: the proxy serves the discovery document at
/// `{issuer}/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4) and the keys at `{issuer}/jwks.json`,
/// with `issuer` equal to the tokens' `iss`.
///
/// With `"tokenType": "dpop"` (or `auto`) it issues DPoP-bound tokens (RFC 9449) as an authorization server does:
/// each token request carries a proof of the account's key for `POST {issuer}/token` (made as for any token endpoint,
/// ``DPoPBinding``), which the issuer checks (``DevProofCheck``) before it mints a token whose `cnf.jkt` is the
/// key's thumbprint (§6.1). It offers ES256 and EdDSA, so a new key is Ed25519.
public struct DevIssuer: SignInFlow {
    public let name = "dev"
    /// The issuer URL, `http://HOST:PORT/-`: its discovery document is under the proxy's own `/-/` endpoints.
    public let issuer: String
    /// The key id: the RFC 7638 JWK thumbprint of the public key.
    let keyID: String
    /// Who the dev account is; derived from the key so it stays the same across restarts.
    public let identity: DevIdentity
    /// How long minted tokens live.
    let lifetime: TimeInterval

    private let key: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date
    /// The account's DPoP binding when its tokens are DPoP-bound, and the check of its proofs.
    private let dpop: (binding: DPoPBinding, check: DevProofCheck)?

    /// The file in the state directory that keeps the signing key (PEM, mode 0600).
    static let keyFileName = "dev-issuer-key.pem"

    /// - Parameter dpop: the account's DPoP binding, when its `tokenType` is not `bearer`: the tokens are bound to its
    ///   key.
    package init(
        issuer: String, key: P256.Signing.PrivateKey, lifetime: TimeInterval = 3600, dpop: DPoPBinding? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.issuer = issuer
        self.key = key
        self.lifetime = lifetime
        self.now = now
        self.dpop = dpop?.ifApplies(offered: DevProofCheck.algorithms).map { ($0, DevProofCheck()) }
        let jwk = DevIssuer.publicJWK(of: key.publicKey)
        // RFC 7638 §3.2: the thumbprint hashes the required members only, in lexicographic order, no whitespace.
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"}"#
        let thumbprint = Base64URL.encode(Array(SHA256.hash(data: Data(canonical.utf8))))
        self.keyID = thumbprint
        self.identity = DevIdentity(thumbprint: SHA256.hash(data: Data(canonical.utf8)))
    }

    /// The issuer URL for a proxy on `listeners`: its first TCP address, where an unspecified one (`0.0.0.0`, `::`)
    /// is reached locally as `127.0.0.1`, so that is what the tokens name.
    public static func issuerURL(listeningOn listeners: [Listener]) -> String {
        // A proxy on socket files only is reached as `http://localhost` through one (curl --unix-socket).
        guard let address = listeners.firstTCPAddress else { return "http://localhost/-" }
        return issuerURL(
            host: ["0.0.0.0", "::"].contains(address.host) ? "127.0.0.1" : address.host, port: address.port)
    }

    /// The issuer URL for a proxy listening on `host:port`.
    public static func issuerURL(host: String, port: Int) -> String {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return "http://\(authority)/-"
    }

    /// Loads the signing key from `directory`, creating and saving one the first time. Without a directory
    /// (`--no-persist`) a fresh key lives in memory only.
    public static func signingKey(in directory: StateDirectory?) throws(StateError) -> P256.Signing.PrivateKey {
        guard let directory else { return P256.Signing.PrivateKey() }
        // A key once written is only ever read: read without the lock (a rename is atomic, so a reader sees the whole
        // file), so a process stopped inside another write holds back no `status` or `token`.
        if let data = try directory.read(keyFileName),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        {
            return key
        }
        return try directory.withLock { () throws(StateError) -> P256.Signing.PrivateKey in
            if let data = try directory.read(keyFileName) {
                do {
                    return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
                } catch {
                    throw .corrupt(path: directory.path + "/" + keyFileName, reason: "not a P-256 private key")
                }
            }
            let key = P256.Signing.PrivateKey()
            try directory.writeUnlocked(Data(key.pemRepresentation.utf8), to: keyFileName)
            return key
        }
    }

    /// Where the token requests' DPoP proofs say they go (`htu`): a token endpoint in name only, since the issuer
    /// runs in the proxy.
    var tokenEndpoint: String { issuer + "/token" }

    public func acquireToken(_ request: TokenRequest) async throws(TokenError) -> AccessToken {
        guard let dpop else { return mint(for: request.scopes) }
        let proofKey = try dpop.binding.key()
        let proof = dpop.binding.proof(key: proofKey, method: "POST", url: tokenEndpoint)
        do {
            let thumbprint = try dpop.check.check(proof, method: "POST", uri: tokenEndpoint, now: now())
            return mint(for: request.scopes, boundTo: thumbprint)
        } catch {
            throw .misconfigured(reason: "the dev issuer refused the token request's DPoP proof: \(error)")
        }
    }

    /// Mints a signed token for `scopes` now; bound to the DPoP key whose thumbprint is `thumbprint` when given
    /// (RFC 9449 §6.1: `cnf.jkt`).
    func mint(for scopes: ScopeSet, boundTo thumbprint: String? = nil) -> AccessToken {
        let issuedAt = now()
        let seconds = Int(issuedAt.timeIntervalSince1970)
        let expiry = seconds + Int(lifetime)
        var claims: [String: Any] = [
            "iss": issuer,
            "sub": identity.subject,
            "oid": identity.objectID,
            "tid": DevIdentity.tenantID,
            "aud": scopes.resource ?? ScopeSet.defaultResource,
            "scp": scopes.permissions.joined(separator: " "),
            "iat": seconds,
            "nbf": seconds,
            "exp": expiry,
            "jti": UUID().uuidString.lowercased(),
            "ver": "2.0",
            "name": DevIdentity.displayName,
            "preferred_username": DevIdentity.userName,
        ]
        if let thumbprint { claims["cnf"] = ["jkt": thumbprint] }
        let header: [String: Any] = ["alg": "ES256", "typ": "JWT", "kid": keyID]
        let signingInput = Self.segment(header) + "." + Self.segment(claims)
        // RFC 7518 §3.4: the ES256 signature is R || S, 32 bytes each — exactly CryptoKit's raw representation.
        let signature = try! key.signature(for: Data(signingInput.utf8))
        return AccessToken(
            value: signingInput + "." + Base64URL.encode(signature.rawRepresentation),
            scopes: scopes,
            expiresOn: Date(timeIntervalSince1970: TimeInterval(expiry)),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(seconds)), boundKey: thumbprint)
    }

    /// The JSON Web Key Set with the one verification key (RFC 7517 §5).
    public var jwksDocument: Data {
        let jwk = Self.publicJWK(of: key.publicKey)
        let keys: [[String: Any]] = [
            ["kty": "EC", "crv": "P-256", "x": jwk.x, "y": jwk.y, "kid": keyID, "use": "sig", "alg": "ES256"]
        ]
        return Self.json(["keys": keys])
    }

    /// The OpenID Provider metadata (OpenID Connect Discovery 1.0 §3): enough for a resource server to find keys.
    public var discoveryDocument: Data {
        var document: [String: Any] = [
            "issuer": issuer,
            "jwks_uri": issuer + "/jwks.json",
            "id_token_signing_alg_values_supported": ["ES256"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "response_types_supported": ["token"],
            "subject_types_supported": ["public"],
            "claims_supported": ["iss", "sub", "oid", "tid", "aud", "scp", "iat", "nbf", "exp", "jti", "name"],
        ]
        // RFC 9449 §5.1: the proof algorithms it checks, when it binds tokens.
        if dpop != nil { document["dpop_signing_alg_values_supported"] = DevProofCheck.algorithms }
        return Self.json(document)
    }

    private static func publicJWK(of key: P256.Signing.PublicKey) -> (x: String, y: String) {
        // x963 is 0x04 || X || Y with 32-byte coordinates (SEC 1 §2.3.3).
        let point = key.x963Representation
        return (Base64URL.encode(point.dropFirst().prefix(32)), Base64URL.encode(point.suffix(32)))
    }

    private static func segment(_ object: [String: Any]) -> String {
        Base64URL.encode(json(object, pretty: false))
    }

    private static func json(_ object: [String: Any], pretty: Bool = true) -> Data {
        // The issuer builds these objects from strings and numbers only: they always have a JSON form.
        JSONObject.data(object, pretty: pretty) ?? Data()
    }
}

/// The dev account's identity: stable per signing key, obviously not a real person.
public struct DevIdentity: Sendable, Hashable {
    public static let displayName = "Dev User"
    public static let userName = "dev@localhost"
    /// A fixed tenant id that cannot collide with a real Entra tenant's.
    public static let tenantID = "00000000-0000-0000-0000-00000000d3v0".replacing("v", with: "e")

    let subject: String
    public let objectID: String

    package init(thumbprint: SHA256.Digest) {
        let bytes = Array(thumbprint)
        subject = Base64URL.encode(bytes.prefix(24))
        let hex = bytes.prefix(16).lowercaseHex
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4),
            hex.dropFirst(16).prefix(4), hex.dropFirst(20).prefix(12),
        ]
        objectID = parts.joined(separator: "-")
    }
}
