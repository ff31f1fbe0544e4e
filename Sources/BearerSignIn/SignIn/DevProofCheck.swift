import BearerHTTP
import BearerJSON
import Crypto
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the `dev` issuer checks of the DPoP proof (RFC 9449 §4.3) a token request carries before it mints a token
/// bound to the proof's key, as a real authorization server does: one compact JWS whose `typ` is `dpop+jwt`, whose
/// `alg` is one it offers (``algorithms``: ES256, EdDSA) and whose `jwk` is a public key of that kind (no `d`); the
/// signature by that key; `htm` and `htu` of the request; `iat` within ``window`` of now; and a `jti` it has not seen
/// (§11.1: remembered for the window, after which `iat` refuses the proof anyway).
///
/// It parses the proof from its bytes and computes the thumbprint from the header's JWK (RFC 7638), sharing nothing
/// with ``DPoPKey`` but swift-crypto's verification: a mistake in the proxy's proofs shows here as it would at a real
/// server.
final class DevProofCheck: Sendable {
    /// The algorithms the dev issuer offers (`dpop_signing_alg_values_supported`).
    static let algorithms = ["ES256", "EdDSA"]
    /// How far `iat` may be from now, either way.
    static let window: TimeInterval = 60
    /// The `jti`s seen within the window, with their `iat`.
    private let seen = Mutex<[String: Int64]>([:])

    /// Why a proof was refused.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case malformed
        case wrongType
        case wrongAlgorithm
        case badKey
        case badSignature
        case wrongRequest
        case outsideWindow
        case replayed

        var description: String {
            switch self {
            case .malformed: "the DPoP proof is not a compact JWS with JSON header and claims"
            case .wrongType: "the DPoP proof's typ is not dpop+jwt"
            case .wrongAlgorithm: "the DPoP proof's alg is not ES256 or EdDSA"
            case .badKey: "the DPoP proof's jwk is not a public key for its alg"
            case .badSignature: "the DPoP proof's signature does not verify with its jwk"
            case .wrongRequest: "the DPoP proof's htm or htu is not this request's"
            case .outsideWindow: "the DPoP proof's iat is not within a minute of now"
            case .replayed: "the DPoP proof's jti was used before"
            }
        }
    }

    /// Checks `proof` for a `method` request to `uri` at `now`; returns the RFC 7638 thumbprint of its key.
    func check(_ proof: String, method: String, uri: String, now: Date) throws(Refusal) -> String {
        let segments = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(segments[0]),
            let claimsBytes = Base64URL.decode(segments[1]), let signature = Base64URL.decode(segments[2]),
            let header = JSONObject.dictionary(headerBytes), let claims = JSONObject.dictionary(claimsBytes)
        else { throw .malformed }
        guard header["typ"] as? String == "dpop+jwt" else { throw .wrongType }
        guard let alg = header["alg"] as? String, Self.algorithms.contains(alg) else { throw .wrongAlgorithm }
        guard let jwk = header["jwk"] as? [String: Any], jwk["d"] == nil, let x = jwk["x"] as? String,
            let xBytes = Base64URL.decode(x), xBytes.count == 32
        else { throw .badKey }
        let signingInput = Array(proof.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count))
        let canonical: String
        if alg == "ES256" {
            guard jwk["kty"] as? String == "EC", jwk["crv"] as? String == "P-256", let y = jwk["y"] as? String,
                let yBytes = Base64URL.decode(y), yBytes.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: Data([0x04]) + xBytes + yBytes)
            else { throw .badKey }
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                key.isValidSignature(ecdsa, for: signingInput)
            else { throw .badSignature }
            canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        } else {
            guard jwk["kty"] as? String == "OKP", jwk["crv"] as? String == "Ed25519",
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: xBytes)
            else { throw .badKey }
            guard key.isValidSignature(signature, for: signingInput) else { throw .badSignature }
            canonical = #"{"crv":"Ed25519","kty":"OKP","x":"\#(x)"}"#
        }
        guard claims["htm"] as? String == method, claims["htu"] as? String == uri else { throw .wrongRequest }
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        guard let iat = JSONObject.integer(claims["iat"]).map(Int64.init),
            abs(iat - nowSeconds) <= Int64(Self.window)
        else { throw .outsideWindow }
        guard let jti = claims["jti"] as? String, !jti.isEmpty else { throw .malformed }
        let fresh = seen.withLock { seen in
            seen = seen.filter { abs($0.value - nowSeconds) <= Int64(Self.window) }
            guard seen[jti] == nil else { return false }
            seen[jti] = iat
            return true
        }
        guard fresh else { throw .replayed }
        // RFC 7638 §3.2: the required members, sorted, no whitespace; base64url values need no escaping.
        return Base64URL.encode(Array(SHA256.hash(data: Data(canonical.utf8))))
    }
}
