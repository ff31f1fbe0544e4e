import Crypto
import Foundation
import _CryptoExtras

/// Verifies a client assertion (RFC 7523 `private_key_jwt`, Microsoft "certificate credentials") against a
/// registered client — everything except `jti` replay, which needs the provider's memory and is checked under its
/// lock. Runs on the event loop before the lock is taken (RSA verification is the slow part).
struct FakeIdentityAssertionVerifier: Sendable {
    /// The only `client_assertion_type` accepted.
    static let jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// How far ahead `nbf`/`iat` may be, in seconds.
    var clockSkew: Int
    /// How far ahead `exp` may be, in seconds.
    var maximumLifetime: Int

    /// The result: what could be decoded, and the first failed check (nil: valid so far).
    struct Verdict: Sendable {
        var decoded: FakeIdentityProvider.DecodedAssertion?
        var failure: FakeIdentityProvider.AssertionCheck?
        var jti: String?
    }

    /// Checks `assertion` in `AssertionCheck` order and stops at the first failure.
    func verify(
        assertion: String?, assertionType: String?, client: FakeIdentityProvider.Client, audiences: [String],
        now: Int
    ) -> Verdict {
        guard assertionType == Self.jwtBearer else { return Verdict(failure: .assertionType) }
        guard let assertion, let parts = FakeIdentityJWT.split(assertion), let header = parts.header,
            let claims = parts.claims
        else { return Verdict(failure: .malformed) }
        let decoded = FakeIdentityProvider.DecodedAssertion(headerJSON: parts.headerJSON, claimsJSON: parts.claimsJSON)
        func failed(_ check: FakeIdentityProvider.AssertionCheck) -> Verdict {
            Verdict(decoded: decoded, failure: check)
        }

        let alg = header["alg"] as? String
        guard alg == "PS256" || alg == "RS256" else { return failed(.algorithm) }
        let certificate: FakeIdentityProvider.RegisteredCertificate?
        if alg == "PS256" {
            let thumbprint = header["x5t#S256"] as? String
            certificate = client.certificates.first { thumbprint != nil && $0.sha256Thumbprint == thumbprint }
        } else {
            let thumbprint = header["x5t"] as? String
            certificate = client.certificates.first { thumbprint != nil && $0.sha1Thumbprint == thumbprint }
        }
        guard let certificate, let key = try? _RSA.Signing.PublicKey(pemRepresentation: certificate.publicKeyPEM)
        else { return failed(.thumbprint) }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: parts.signature)
        let digest = SHA256.hash(data: parts.signingInput)
        let padding: _RSA.Signing.Padding = alg == "PS256" ? .PSS : .insecurePKCS1v1_5
        guard key.isValidSignature(signature, for: digest, padding: padding) else { return failed(.signature) }

        guard claims["iss"] as? String == client.id else { return failed(.issuer) }
        guard claims["sub"] as? String == client.id else { return failed(.subject) }
        let audience: [String]
        if let single = claims["aud"] as? String {
            audience = [single]
        } else {
            audience = claims["aud"] as? [String] ?? []
        }
        guard audience.contains(where: audiences.contains) else { return failed(.audience) }
        guard let jti = claims["jti"] as? String, !jti.isEmpty else { return failed(.missingJTI) }
        for name in ["nbf", "iat"] {
            if let value = Self.number(claims[name]), value > Double(now + self.clockSkew) {
                return failed(.notYetValid)
            }
        }
        guard let exp = Self.number(claims["exp"]), exp > Double(now) else { return failed(.expired) }
        guard exp <= Double(now + self.maximumLifetime) else { return failed(.lifetimeTooLong) }
        return Verdict(decoded: decoded, failure: nil, jti: jti)
    }

    /// A JSON number as a Double (nil for anything else, including numeric strings).
    static func number(_ value: Any?) -> Double? {
        switch value {
        case let value as Int: return Double(value)
        case let value as Double: return value
        case let value as NSNumber: return value.doubleValue
        default: return nil
        }
    }
}
