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

/// Proof Key for Code Exchange (RFC 7636): the verifier stays here, its SHA-256 goes with the authorization
/// request, and only the holder of the verifier can redeem the code.
struct ProofKey: Sendable {
    /// 43 characters of `[A-Za-z0-9-_]` (32 random bytes, base64url): RFC 7636 §4.1 asks for 43–128 from the
    /// unreserved set and at least 256 bits of entropy.
    let verifier: String

    init(verifier: String = ProofKey.randomToken()) {
        self.verifier = verifier
    }

    /// `code_challenge` for `code_challenge_method=S256`: unpadded base64url of SHA-256 of the verifier (§4.2).
    var challenge: String {
        Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// 32 random bytes, base64url: for the verifier, `state` and `nonce`.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
