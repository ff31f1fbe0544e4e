import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The key a sign-in proves possession of for its sender-constrained tokens (DPoP, RFC 9449): a P-256 key signing
/// ES256 proofs (RFC 7518 §3.4).
///
/// The public half travels in every proof's header as a JWK (RFC 7517; `kty`, `crv`, `x`, `y` — never `d`), and the
/// authorization server binds the tokens it issues to the key's RFC 7638 thumbprint (``thumbprint``, the `jkt`).
/// The header is the same for every proof of a key, so it is encoded once here: a proof then costs one SHA-256 (for
/// `ath`, when there is an access token), its claims' few bytes and one signature.
///
/// The private key is a secret: `description` and the mirror print `<redacted>` and the thumbprint.
package struct DPoPKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let privateKey: P256.Signing.PrivateKey
    /// The public key as a JWK, members in the order RFC 7638 §3.2 hashes them.
    package let publicJWK: [(name: String, value: String)]
    /// The RFC 7638 thumbprint of ``publicJWK`` (SHA-256, base64url): the `jkt` of `dpop_jkt` and of `cnf`.
    package let thumbprint: String
    /// `base64url(header) + "."`, the same for every proof of this key.
    private let headerPrefix: String

    /// A new random key.
    package init() {
        self.init(privateKey: P256.Signing.PrivateKey())
    }

    /// The key whose 32-byte private scalar is `rawRepresentation` (as ``rawRepresentation`` gave it); nil when the
    /// bytes are not a P-256 private key.
    package init?(rawRepresentation: some ContiguousBytes) {
        guard let key = try? P256.Signing.PrivateKey(rawRepresentation: rawRepresentation) else { return nil }
        self.init(privateKey: key)
    }

    private init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        // x963 is 0x04 || X || Y with 32-byte coordinates (SEC 1 §2.3.3); a JWK's x and y are those, base64url.
        let point = privateKey.publicKey.x963Representation
        let x = Base64URL.encode(point.dropFirst().prefix(32))
        let y = Base64URL.encode(point.suffix(32))
        publicJWK = [("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]
        // RFC 7638 §3.2/§3.3: the required members only, sorted, no whitespace; their values need no escaping.
        let canonical = "{" + publicJWK.map { "\"\($0.name)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        thumbprint = Base64URL.encode(Array(SHA256.hash(data: Data(canonical.utf8))))
        // RFC 9449 §4.2: typ, alg and the public key.
        let header = "{\"typ\":\"dpop+jwt\",\"alg\":\"ES256\",\"jwk\":" + canonical + "}"
        headerPrefix = Base64URL.encode(Data(header.utf8)) + "."
    }

    /// The private scalar, for the key file only.
    package var rawRepresentation: Data { privateKey.rawRepresentation }

    /// The public key, for tests that verify proofs the way a server does.
    package var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// A DPoP proof (RFC 9449 §4.2) for one request: `method` and `url` as sent (the query and fragment are left out
    /// of `htu`, §4.2), a random `jti`, `iat` = `now`; `ath` = base64url(SHA-256(`accessToken`)) when one is sent
    /// with the request (§4.2, at a resource server); `nonce` when the server gave one (§8, §9).
    package func proof(
        method: String, url: String, at now: Date, accessToken: String? = nil, nonce: String? = nil
    ) -> String {
        var claims = "{\"jti\":\"" + Self.uniqueIdentifier() + "\",\"htm\":" + JSONPath.quoted(method)
        claims += ",\"htu\":" + JSONPath.quoted(Self.targetURI(url))
        claims += ",\"iat\":" + String(Int64(now.timeIntervalSince1970.rounded(.down)))
        if let accessToken {
            claims += ",\"ath\":\"" + Base64URL.encode(Array(SHA256.hash(data: Data(accessToken.utf8)))) + "\""
        }
        if let nonce { claims += ",\"nonce\":" + JSONPath.quoted(nonce) }
        claims += "}"
        let signingInput = headerPrefix + Base64URL.encode(Data(claims.utf8))
        // RFC 7518 §3.4: the signature is R || S, 32 bytes each — exactly swift-crypto's raw representation. Signing
        // with a valid key over any bytes cannot fail.
        let signature = try! privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// `url` without its query and fragment (RFC 9449 §4.2 `htu`; RFC 3986 §6.2.2 normalisation is the server's).
    static func targetURI(_ url: String) -> String {
        guard let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<end])
    }

    /// 16 random bytes, base64url: RFC 9449 §4.2 asks for enough entropy that a `jti` is unique.
    private static func uniqueIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    package var description: String { "DPoPKey(<redacted>, jkt: \(thumbprint))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(self, children: ["privateKey": "<redacted>", "thumbprint": thumbprint], displayStyle: .struct)
    }
}
