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
/// ES256 proofs (RFC 7518 §3.4), or an Ed25519 key signing EdDSA ones (RFC 8037 §3.1) — ``Algorithm``.
///
/// The public half travels in every proof's header as a JWK (RFC 7517; `kty`, `crv`, `x`, `y` for P-256, RFC 8037
/// §2's `kty` `OKP`, `crv`, `x` for Ed25519 — never `d`), and the authorization server binds the tokens it issues to
/// the key's RFC 7638 thumbprint (``thumbprint``, the `jkt`). The header is the same for every proof of a key, so it
/// is encoded once here: a proof then costs one SHA-256 (for `ath`, when there is an access token), its claims' few
/// bytes and one signature.
///
/// The private key is a secret: `description` and the mirror print `<redacted>` and the thumbprint.
package struct DPoPKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The JWS algorithm a key signs its proofs with, as `dpop_signing_alg_values_supported` names it (RFC 9449
    /// §5.1).
    package enum Algorithm: String, Sendable, CaseIterable {
        /// ECDSA with P-256 and SHA-256 (RFC 7518 §3.4): every DPoP server takes it, and it is the default.
        case es256 = "ES256"
        /// Ed25519 (RFC 8037 §3.1): about a quarter cheaper to sign than ES256 (docs/benchmarks.md), used where
        /// the server offers it.
        case edDSA = "EdDSA"

        /// The algorithm of a new key for a server that lists `offered` in its metadata: EdDSA when it is there,
        /// else ES256 (also when the server says nothing: ES256 is the one RFC 9449 servers are expected to take).
        package static func preferred(offered: [String]) -> Algorithm {
            offered.contains(Algorithm.edDSA.rawValue) ? .edDSA : .es256
        }
    }

    private enum PrivateKey: Sendable {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }

    private let privateKey: PrivateKey
    /// The algorithm its proofs name in `alg`.
    package var algorithm: Algorithm {
        switch privateKey {
        case .p256: .es256
        case .ed25519: .edDSA
        }
    }
    /// The public key as a JWK, members in the order RFC 7638 §3.2 hashes them.
    package let publicJWK: [(name: String, value: String)]
    /// The RFC 7638 thumbprint of ``publicJWK`` (SHA-256, base64url): the `jkt` of `dpop_jkt` and of `cnf`.
    package let thumbprint: String
    /// `base64url(header) + "."`, the same for every proof of this key.
    private let headerPrefix: [UInt8]

    /// A new random key for `algorithm` (ES256 unless said otherwise).
    package init(algorithm: Algorithm = .es256) {
        switch algorithm {
        case .es256: self.init(privateKey: .p256(P256.Signing.PrivateKey()))
        case .edDSA: self.init(privateKey: .ed25519(Curve25519.Signing.PrivateKey()))
        }
    }

    /// The `algorithm` key whose private part is `rawRepresentation` (as ``rawRepresentation`` gave it: the 32-byte
    /// P-256 scalar, or the 32-byte Ed25519 seed); nil when the bytes are not one.
    package init?(algorithm: Algorithm = .es256, rawRepresentation: some ContiguousBytes) {
        switch algorithm {
        case .es256:
            guard let key = try? P256.Signing.PrivateKey(rawRepresentation: rawRepresentation) else { return nil }
            self.init(privateKey: .p256(key))
        case .edDSA:
            guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation) else {
                return nil
            }
            self.init(privateKey: .ed25519(key))
        }
    }

    private init(privateKey: PrivateKey) {
        self.privateKey = privateKey
        let algorithm: Algorithm
        switch privateKey {
        case .p256(let key):
            algorithm = .es256
            // x963 is 0x04 || X || Y with 32-byte coordinates (SEC 1 §2.3.3); a JWK's x and y are those, base64url.
            let point = key.publicKey.x963Representation
            let x = Base64URL.encode(point.dropFirst().prefix(32))
            let y = Base64URL.encode(point.suffix(32))
            publicJWK = [("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]
        case .ed25519(let key):
            algorithm = .edDSA
            // RFC 8037 §2: the 32-byte public key as x.
            publicJWK = [("crv", "Ed25519"), ("kty", "OKP"), ("x", Base64URL.encode(key.publicKey.rawRepresentation))]
        }
        // RFC 7638 §3.2/§3.3: the required members only, sorted, no whitespace; their values need no escaping.
        let canonical = "{" + publicJWK.map { "\"\($0.name)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        thumbprint = Base64URL.encode(Array(SHA256.hash(data: Data(canonical.utf8))))
        // RFC 9449 §4.2: typ, alg and the public key.
        let header = "{\"typ\":\"dpop+jwt\",\"alg\":\"\(algorithm.rawValue)\",\"jwk\":" + canonical + "}"
        headerPrefix = Array((Base64URL.encode(Data(header.utf8)) + ".").utf8)
    }

    /// The private part, for the key file only: the P-256 scalar or the Ed25519 seed.
    package var rawRepresentation: Data {
        switch privateKey {
        case .p256(let key): key.rawRepresentation
        case .ed25519(let key): key.rawRepresentation
        }
    }

    /// A DPoP proof (RFC 9449 §4.2) for one request: `method` and `url` as sent (the query and fragment are left out
    /// of `htu`, §4.2), a random `jti`, `iat` = `now`; `ath` = base64url(SHA-256(`accessToken`)) when one is sent
    /// with the request (§4.2, at a resource server); `nonce` when the server gave one (§8, §9).
    package func proof(
        method: String, url: String, at now: Date, accessToken: String? = nil, nonce: String? = nil
    ) -> String {
        String(
            decoding: proof(
                method: method, htu: Self.targetURI(url), iat: Int64(now.timeIntervalSince1970.rounded(.down)),
                accessTokenHash: accessToken.map(Self.accessTokenHash), nonce: nonce),
            as: UTF8.self)
    }

    /// A proof's bytes, for a request to a resource server on every forwarded request (§7): `htu` already without
    /// query and fragment, `accessTokenHash` the token's `ath` (hashed once per token, ``accessTokenHash(_:)``),
    /// `nonce` a `DPoP-Nonce` already checked to be NQCHARs (§8.1). The header is this key's, encoded once; what a
    /// proof costs is its claims' bytes, their base64url, and one signature.
    package func proof(method: String, htu: String, iat: Int64, accessTokenHash: String?, nonce: String?) -> [UInt8] {
        var claims: [UInt8] = []
        claims.reserveCapacity(
            96 + method.utf8.count + htu.utf8.count + (accessTokenHash?.utf8.count ?? 0) + (nonce?.utf8.count ?? 0))
        claims.append(contentsOf: #"{"jti":""#.utf8)
        Self.appendUniqueIdentifier(to: &claims)
        claims.append(contentsOf: #"","htm":"#.utf8)
        Self.appendQuoted(method, to: &claims)
        claims.append(contentsOf: #","htu":"#.utf8)
        Self.appendQuoted(htu, to: &claims)
        claims.append(contentsOf: #","iat":"#.utf8)
        claims.append(contentsOf: String(iat).utf8)
        if let accessTokenHash {
            claims.append(contentsOf: #","ath":"#.utf8)
            Self.appendQuoted(accessTokenHash, to: &claims)
        }
        if let nonce {
            claims.append(contentsOf: #","nonce":"#.utf8)
            Self.appendQuoted(nonce, to: &claims)
        }
        claims.append(UInt8(ascii: "}"))
        var proof: [UInt8] = []
        proof.reserveCapacity(headerPrefix.count + Base64URL.encodedCount(claims.count) + 1 + 86)
        proof.append(contentsOf: headerPrefix)
        Base64URL.append(claims, to: &proof)
        // Signing with a valid key over any bytes cannot fail.
        let signature: Data
        switch privateKey {
        case .p256(let key):
            // RFC 7518 §3.4: the signature is R || S, 32 bytes each — exactly swift-crypto's raw representation.
            signature = try! key.signature(for: proof).rawRepresentation
        case .ed25519(let key):
            // RFC 8037 §3.1: the 64-byte Ed25519 signature as it is.
            signature = try! key.signature(for: proof)
        }
        proof.append(UInt8(ascii: "."))
        Base64URL.append(signature, to: &proof)
        return proof
    }

    /// `ath` for `accessToken`: base64url(SHA-256 of its ASCII bytes) (RFC 9449 §4.2).
    package static func accessTokenHash(_ accessToken: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(43)
        Base64URL.append(SHA256.hash(data: Array(accessToken.utf8)), to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
    private static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `url` without its query and fragment (RFC 9449 §4.2 `htu`; RFC 3986 §6.2.2 normalisation is the server's).
    static func targetURI(_ url: String) -> String {
        guard let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<end])
    }

    /// 16 random bytes, base64url: RFC 9449 §4.2 asks for enough entropy that a `jti` is unique. Two draws of the
    /// system's generator, not one a byte.
    private static func appendUniqueIdentifier(to out: inout [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let words = (generator.next() as UInt64, generator.next() as UInt64)
        withUnsafeBytes(of: words) { Base64URL.append($0, to: &out) }
    }

    package var description: String { "DPoPKey(<redacted>, jkt: \(thumbprint))" }
    package var debugDescription: String { description }
    package var customMirror: Mirror {
        Mirror(
            self, children: ["privateKey": "<redacted>", "algorithm": algorithm.rawValue, "thumbprint": thumbprint],
            displayStyle: .struct)
    }
}
