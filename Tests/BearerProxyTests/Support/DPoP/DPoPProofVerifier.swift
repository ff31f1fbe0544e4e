import Crypto
import Foundation
import NIOHTTP1

/// What RFC 9449 §4.3 asks a server to check of a DPoP proof, written for the tests on their own: its JOSE parsing,
/// thumbprint and signature check share nothing with the proxy's `DPoPKey` but swift-crypto's P-256 and Ed25519
/// verification. It takes the algorithms its server offers (``algorithms``): ES256 (RFC 7518 §3.4, an `EC` `P-256`
/// JWK) and EdDSA (RFC 8037 §3.1, an `OKP` `Ed25519` JWK).
///
/// The replay cache remembers every `jti` it accepted (§11.1); a proof whose `iat` is more than ``window`` away
/// from the server's clock is refused (§4.3 step 11), so the cache never needs to hold older ones.
struct DPoPProofVerifier: Sendable {
    /// Why a proof was refused: the `error_description` the fake answers with.
    enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case missing
        case notOneHeader
        case malformed
        case wrongType(String?)
        case wrongAlgorithm(String?)
        case noKey
        case privateKeyInHeader
        case badSignature
        case missingClaim(String)
        case wrongMethod(String)
        case wrongURI(String)
        case outsideWindow
        case replayed
        case nonceRequired
        case wrongNonce
        case wrongAccessTokenHash

        var description: String {
            switch self {
            case .missing: "no DPoP proof"
            case .notOneHeader: "more than one DPoP header"
            case .malformed: "the proof is not a compact JWS"
            case .wrongType(let typ): "typ is \(typ ?? "absent"), not dpop+jwt"
            case .wrongAlgorithm(let alg): "alg \(alg ?? "absent") is not an accepted asymmetric algorithm"
            case .noKey: "no EC P-256 or OKP Ed25519 jwk matching alg in the header"
            case .privateKeyInHeader: "the jwk holds a private key"
            case .badSignature: "the signature does not verify with the header's jwk"
            case .missingClaim(let name): "the \(name) claim is missing"
            case .wrongMethod(let htm): "htm \(htm) is not this request's method"
            case .wrongURI(let htu): "htu \(htu) is not this request's URI"
            case .outsideWindow: "iat is outside the accepted window"
            case .replayed: "the jti was used before"
            case .nonceRequired: "a nonce is required"
            case .wrongNonce: "the nonce is not the current one"
            case .wrongAccessTokenHash: "ath does not match the access token"
            }
        }

        /// Refusals a client meets by using the nonce in `DPoP-Nonce` (§8): `use_dpop_nonce`.
        var isNonce: Bool { self == .nonceRequired || self == .wrongNonce }
    }

    /// What an accepted proof says.
    struct Accepted: Sendable {
        /// The RFC 7638 thumbprint of its key, computed here.
        var thumbprint: String
        /// Its `alg`.
        var algorithm: String
        var jti: String
        var htu: String
        var nonce: String?
    }

    /// How far `iat` may be from now, either way.
    var window: TimeInterval = 60
    /// The `alg` values accepted: what the server lists in `dpop_signing_alg_values_supported`.
    var algorithms: Set<String> = ["ES256"]
    private(set) var seen: Set<String> = []

    /// Checks the `DPoP` header of a `method` request to `uri` (scheme, authority and path, as the server is
    /// reached) received at `now`; `nonce` is the one the server demands (nil: none), `accessToken` the token the
    /// request presents (nil: none, so no `ath`).
    mutating func verify(
        _ headers: HTTPHeaders, method: String, uri: String, now: Date, nonce: String?, accessToken: String? = nil
    ) -> Result<Accepted, Refusal> {
        let values = headers["dpop"]
        guard !values.isEmpty else { return .failure(.missing) }
        guard values.count == 1 else { return .failure(.notOneHeader) }
        let segments = values[0].split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = FakeIdentityJWT.decodeBase64URL(segments[0]),
            let claimsBytes = FakeIdentityJWT.decodeBase64URL(segments[1]),
            let signature = FakeIdentityJWT.decodeBase64URL(segments[2]),
            let header = FakeIdentityJWT.object(headerBytes), let claims = FakeIdentityJWT.object(claimsBytes)
        else { return .failure(.malformed) }
        guard header["typ"] as? String == "dpop+jwt" else { return .failure(.wrongType(header["typ"] as? String)) }
        guard let alg = header["alg"] as? String, algorithms.contains(alg) else {
            return .failure(.wrongAlgorithm(header["alg"] as? String))
        }
        guard let jwk = header["jwk"] as? [String: Any] else { return .failure(.noKey) }
        guard jwk["d"] == nil else { return .failure(.privateKeyInHeader) }
        let signingInput = Array("\(segments[0]).\(segments[1])".utf8)
        let thumbprint: String
        switch alg {
        case "ES256":
            guard jwk["kty"] as? String == "EC", jwk["crv"] as? String == "P-256", let x = jwk["x"] as? String,
                let y = jwk["y"] as? String, let xBytes = FakeIdentityJWT.decodeBase64URL(x),
                let yBytes = FakeIdentityJWT.decodeBase64URL(y), xBytes.count == 32, yBytes.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + xBytes + yBytes)
            else { return .failure(.noKey) }
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                key.isValidSignature(ecdsa, for: signingInput)
            else { return .failure(.badSignature) }
            thumbprint = Self.thumbprint(x: x, y: y)
        case "EdDSA":
            // RFC 8037 §2: kty OKP, crv Ed25519, x the 32-byte public key; §3.1: the 64-byte signature.
            guard jwk["kty"] as? String == "OKP", jwk["crv"] as? String == "Ed25519", let x = jwk["x"] as? String,
                let xBytes = FakeIdentityJWT.decodeBase64URL(x), xBytes.count == 32,
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: xBytes)
            else { return .failure(.noKey) }
            guard signature.count == 64, key.isValidSignature(signature, for: signingInput) else {
                return .failure(.badSignature)
            }
            thumbprint = Self.thumbprint(ed25519X: x)
        default:
            return .failure(.wrongAlgorithm(alg))
        }
        for name in ["jti", "htm", "htu", "iat"] where claims[name] == nil { return .failure(.missingClaim(name)) }
        guard let jti = claims["jti"] as? String, !jti.isEmpty else { return .failure(.missingClaim("jti")) }
        let htm = claims["htm"] as? String ?? ""
        guard htm == method else { return .failure(.wrongMethod(htm)) }
        let htu = claims["htu"] as? String ?? ""
        guard htu == uri else { return .failure(.wrongURI(htu)) }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, abs(iat - now.timeIntervalSince1970) <= window
        else { return .failure(.outsideWindow) }
        if let accessToken {
            let expected = FakeIdentityJWT.base64URL(SHA256.hash(data: Array(accessToken.utf8)))
            guard claims["ath"] as? String == expected else { return .failure(.wrongAccessTokenHash) }
        }
        let sentNonce = claims["nonce"] as? String
        if let nonce {
            guard let sentNonce else { return .failure(.nonceRequired) }
            guard sentNonce == nonce else { return .failure(.wrongNonce) }
        }
        // Last: a proof refused for another reason has not used its jti.
        guard seen.insert(jti).inserted else { return .failure(.replayed) }
        return .success(
            Accepted(thumbprint: thumbprint, algorithm: alg, jti: jti, htu: htu, nonce: sentNonce))
    }

    /// RFC 7638 §3 for an EC key, by JSONSerialization's sorted, compact output of the required members.
    static func thumbprint(x: String, y: String) -> String {
        thumbprint(of: ["crv": "P-256", "kty": "EC", "x": x, "y": y])
    }

    /// RFC 7638 §3 for an Ed25519 key (RFC 8037 §2: the required members are crv, kty and x).
    static func thumbprint(ed25519X x: String) -> String {
        thumbprint(of: ["crv": "Ed25519", "kty": "OKP", "x": x])
    }

    private static func thumbprint(of members: [String: String]) -> String {
        let canonical = try! JSONSerialization.data(
            withJSONObject: members, options: [.sortedKeys, .withoutEscapingSlashes])
        return FakeIdentityJWT.base64URL(SHA256.hash(data: canonical))
    }
}
