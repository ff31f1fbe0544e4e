import Crypto
import Foundation
import _CryptoExtras

extension FakeIdentityProvider {
    /// The client assertion check that failed (`RecordedTokenRequest.assertionFailure`), in the order the fake
    /// checks them, with the Entra error each one answers (all `invalid_client`, HTTP 401).
    enum AssertionCheck: String, Sendable, Equatable, CaseIterable {
        /// `client_assertion_type` is not `urn:ietf:params:oauth:client-assertion-type:jwt-bearer` (50027).
        case assertionType
        /// Not a compact JWS with a JSON header and payload (50027).
        case malformed
        /// `alg` is neither PS256 nor RS256 (5002738).
        case algorithm
        /// The thumbprint header for the `alg` (PS256: `x5t#S256`, RS256: `x5t`) is missing or names no
        /// certificate registered on the client (700027).
        case thumbprint
        /// The signature does not verify with the registered key (700027).
        case signature
        /// `iss` is not the client id (700021).
        case issuer
        /// `sub` is not the client id (700021).
        case subject
        /// `aud` is not the token endpoint's URL (50012).
        case audience
        /// No `jti` (50027).
        case missingJTI
        /// `nbf` or `iat` lies beyond now + clock skew (500133).
        case notYetValid
        /// `exp` is missing or not in the future (500133).
        case expired
        /// `exp` lies further ahead than the maximum assertion lifetime (500133).
        case lifetimeTooLong
        /// The `jti` was already used by an accepted assertion (50027).
        case replayedJTI
        /// Federated: no federated credential of the client names the assertion's `iss` (700211).
        case federatedIssuer
        /// Federated: the `kid` names no key of the issuer's JWKS (700027).
        case federatedKey
        /// Federated: no federated credential of that issuer names the assertion's `sub` (700213).
        case federatedSubject
        /// Federated: the `aud` is not the credential's audience (700212).
        case federatedAudience

        /// The answer for this failure.
        var entraError: FakeIdentityError {
            switch self {
            case .assertionType:
                return .invalidClient(50027, "Invalid JWT token: client_assertion_type must be jwt-bearer.")
            case .malformed: return .invalidClient(50027, "Invalid JWT token: the assertion is not a JWS.")
            case .algorithm: return .invalidClient(5002738)
            case .thumbprint:
                return .invalidClient(
                    700027,
                    "The certificate with the identifier used to sign the client assertion is not registered on the application."
                )
            case .signature: return .invalidClient(700027)
            case .issuer, .subject: return .invalidClient(700021)
            case .audience: return .invalidClient(50012)
            case .missingJTI: return .invalidClient(50027, "Invalid JWT token: no 'jti' claim.")
            case .notYetValid:
                return .invalidClient(500133, "Assertion is not within its valid time range (not yet valid).")
            case .expired: return .invalidClient(500133, "Assertion is not within its valid time range (expired).")
            case .lifetimeTooLong:
                return .invalidClient(500133, "Assertion is not within its valid time range (lifetime too long).")
            case .replayedJTI: return .invalidClient(50027, "Invalid JWT token: the 'jti' was already used.")
            case .federatedIssuer:
                return .invalidClient(
                    700211, "No matching federated identity record found for presented assertion issuer.")
            case .federatedKey:
                return .invalidClient(700027, "The key used to sign the assertion is not in the issuer's JWKS.")
            case .federatedSubject:
                return .invalidClient(
                    700213, "No matching federated identity record found for presented assertion subject.")
            case .federatedAudience:
                return .invalidClient(
                    700212, "No matching federated identity record found for presented assertion audience.")
            }
        }
    }
}

extension FakeIdentityProvider {
    /// A client assertion as the fake decoded it (JSON kept as bytes so the value is `Sendable`).
    struct DecodedAssertion: Sendable {
        /// The header JSON.
        var headerJSON: [UInt8]
        /// The payload JSON.
        var claimsJSON: [UInt8]

        /// The header (`alg`, `typ`, `x5t#S256` / `x5t`, ...).
        var header: [String: Any] { FakeIdentityJWT.object(self.headerJSON) ?? [:] }
        /// The claims (`aud`, `iss`, `sub`, `jti`, `nbf`, `iat`, `exp`, ...).
        var claims: [String: Any] { FakeIdentityJWT.object(self.claimsJSON) ?? [:] }
    }
}

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
        /// Whether it was an outside issuer's assertion (a federated credential), which may be presented again.
        var federated = false
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
        // Entra: an assertion not issued by the client itself is looked up among its federated credentials.
        if claims["iss"] as? String != client.id, !client.federatedCredentials.isEmpty {
            return self.verifyFederated(parts, decoded: decoded, client: client, now: now)
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
