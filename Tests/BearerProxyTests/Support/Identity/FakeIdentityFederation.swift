import Crypto
import Foundation

extension FakeIdentityProvider {
    /// A federated identity credential on a client, as Entra keeps one (workload identity federation): assertions
    /// that `issuer` signed for `subject` and `audience` count as the client's credential. Entra fetches the
    /// issuer's JWKS from its discovery document; the fake is given it.
    struct FederatedCredential: Sendable {
        /// The outside issuer (`iss`), e.g. a Kubernetes cluster's OIDC issuer URL.
        var issuer: String
        /// The `sub` accepted, e.g. `system:serviceaccount:NAMESPACE:NAME`.
        var subject: String
        /// The `aud` required, `api://AzureADTokenExchange` for Entra.
        var audience: String
        /// The issuer's JWKS document (RFC 7517 §5), as JSON bytes so the value is `Sendable`.
        var jwksJSON: [UInt8]

        /// The P-256 key with `kid` in the JWKS, if there is one.
        func key(id: String) -> P256.Signing.PublicKey? {
            let keys = FakeIdentityJWT.object(self.jwksJSON)?["keys"] as? [[String: Any]] ?? []
            guard let jwk = keys.first(where: { $0["kid"] as? String == id }), jwk["kty"] as? String == "EC",
                jwk["crv"] as? String == "P-256",
                let x = (jwk["x"] as? String).flatMap(FakeIdentityJWT.decodeBase64URL),
                let y = (jwk["y"] as? String).flatMap(FakeIdentityJWT.decodeBase64URL)
            else { return nil }
            return try? P256.Signing.PublicKey(rawRepresentation: x + y)
        }
    }
}

extension FakeIdentityAssertionVerifier {
    /// Checks an assertion that an outside issuer signed, as Entra checks one against the client's federated
    /// identity credentials: ES256 signature with a key of the issuer's JWKS, then `sub`, `aud` and the time range.
    /// No `jti` replay check: a platform's token is presented again for as long as it lives.
    func verifyFederated(
        _ parts: FakeIdentityJWT.Parts, decoded: FakeIdentityProvider.DecodedAssertion,
        client: FakeIdentityProvider.Client, now: Int
    ) -> Verdict {
        func failed(_ check: FakeIdentityProvider.AssertionCheck) -> Verdict {
            Verdict(decoded: decoded, failure: check)
        }
        let header = parts.header ?? [:]
        let claims = parts.claims ?? [:]
        guard header["alg"] as? String == "ES256" else { return failed(.algorithm) }
        let candidates = client.federatedCredentials.filter { $0.issuer == claims["iss"] as? String }
        guard !candidates.isEmpty else { return failed(.federatedIssuer) }
        guard let keyID = header["kid"] as? String,
            let key = candidates.lazy.compactMap({ $0.key(id: keyID) }).first
        else { return failed(.federatedKey) }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
            key.isValidSignature(signature, for: SHA256.hash(data: parts.signingInput))
        else { return failed(.signature) }
        guard let credential = candidates.first(where: { $0.subject == claims["sub"] as? String }) else {
            return failed(.federatedSubject)
        }
        let audience = claims["aud"] as? [String] ?? [claims["aud"] as? String].compactMap { $0 }
        guard audience.contains(credential.audience) else { return failed(.federatedAudience) }
        if let notBefore = Self.number(claims["nbf"]), notBefore > Double(now + self.clockSkew) {
            return failed(.notYetValid)
        }
        guard let exp = Self.number(claims["exp"]), exp > Double(now) else { return failed(.expired) }
        return Verdict(decoded: decoded, failure: nil, jti: nil, federated: true)
    }
}

/// A platform that issues workload tokens, as a Kubernetes cluster's OIDC issuer does: it signs service-account
/// tokens with an ES256 key it publishes in a JWKS, and Entra accepts them as client assertions through a
/// federated identity credential.
struct WorkloadIssuer: Sendable {
    /// The audience Entra requires of federated assertions.
    static let entraAudience = "api://AzureADTokenExchange"
    /// The service account the tests' pod runs as.
    static let serviceAccount = "system:serviceaccount:payments:bearer-proxy"

    let url: String
    let keyID: String
    private let key: P256.Signing.PrivateKey

    init(url: String = "https://oidc.cluster.example/\(UUID().uuidString.lowercased())", keyID: String = "sa-key-1") {
        self.url = url
        self.keyID = keyID
        self.key = P256.Signing.PrivateKey()
    }

    /// The issuer's JWKS document (RFC 7517 §5; RFC 7518 §6.2.1 for the EC members).
    var jwks: [String: Any] {
        let raw = Array(self.key.publicKey.rawRepresentation)
        let jwk: [String: Any] = [
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.keyID,
            "x": FakeIdentityJWT.base64URL(raw[0..<32]), "y": FakeIdentityJWT.base64URL(raw[32...]),
        ]
        return ["keys": [jwk]]
    }

    /// A federated identity credential that trusts this issuer for `subject` and `audience`.
    func credential(subject: String = serviceAccount, audience: String = entraAudience)
        -> FakeIdentityProvider.FederatedCredential
    {
        FakeIdentityProvider.FederatedCredential(
            issuer: self.url, subject: subject, audience: audience, jwksJSON: FakeIdentityJWT.json(self.jwks))
    }

    /// A token as the platform writes it to the projected file: ES256 over `iss`, `sub`, `aud`, `iat`, `nbf`,
    /// `exp` and `jti` (RFC 7515; RFC 7518 §3.4: the signature is R ‖ S).
    func assertion(
        subject: String = serviceAccount, audience: String = entraAudience, issuedAt: Date = Date(),
        lifetime: TimeInterval = 3600, jti: String = UUID().uuidString
    ) -> String {
        let iat = Int(issuedAt.timeIntervalSince1970)
        let header: [String: Any] = ["alg": "ES256", "typ": "JWT", "kid": self.keyID]
        let claims: [String: Any] = [
            "iss": self.url, "sub": subject, "aud": [audience], "iat": iat, "nbf": iat, "exp": iat + Int(lifetime),
            "jti": jti,
        ]
        let signingInput =
            FakeIdentityJWT.base64URL(FakeIdentityJWT.json(header)) + "."
            + FakeIdentityJWT.base64URL(FakeIdentityJWT.json(claims))
        guard let signature = try? self.key.signature(for: SHA256.hash(data: Array(signingInput.utf8))) else {
            fatalError("P-256 signing failed")
        }
        return signingInput + "." + FakeIdentityJWT.base64URL(signature.rawRepresentation)
    }
}
