import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate and its private key, for signed client assertions (RFC 7523 §2.2; Microsoft's "certificate
/// credentials"). Loaded once at start-up; the key never leaves this type.
struct ClientCertificate: Sendable {
    private let key: _RSA.Signing.PrivateKey
    /// `x5t#S256`: base64url of the SHA-256 of the certificate's DER (RFC 7515 §4.1.8).
    let sha256Thumbprint: String
    /// `x5t`: base64url of the SHA-1 of the DER (RFC 7515 §4.1.7), for the legacy RS256 form.
    let sha1Thumbprint: String

    init(certFile: String, keyFile: String) throws(TokenError) {
        guard let certificatePEM = try? String(contentsOfFile: certFile, encoding: .utf8),
            let der = Self.firstDERBlock(in: certificatePEM, label: "CERTIFICATE")
        else { throw .misconfigured(reason: "\(certFile) holds no PEM certificate") }
        guard let keyPEM = try? String(contentsOfFile: keyFile, encoding: .utf8),
            let key = try? _RSA.Signing.PrivateKey(pemRepresentation: keyPEM)
        else { throw .misconfigured(reason: "\(keyFile) holds no RSA private key in PEM form") }
        self.key = key
        sha256Thumbprint = Base64URL.encode(Array(SHA256.hash(data: der)))
        sha1Thumbprint = Base64URL.encode(Array(Insecure.SHA1.hash(data: der)))
    }

    /// A client assertion for `clientID` at `tokenEndpoint`: `aud` is the token endpoint, `iss` = `sub` = the
    /// client id, a new `jti`, valid for ten minutes (as MSAL makes them — protocols.md §5).
    func assertion(
        clientID: String, tokenEndpoint: String, algorithm: ClientCredentialsAccount.AssertionAlgorithm, now: Date
    ) throws(TokenError) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        var header: [String: Any] = ["alg": algorithm.rawValue, "typ": "JWT"]
        switch algorithm {
        case .ps256: header["x5t#S256"] = sha256Thumbprint
        case .rs256: header["x5t"] = sha1Thumbprint
        }
        let claims: [String: Any] = [
            "aud": tokenEndpoint, "iss": clientID, "sub": clientID, "jti": UUID().uuidString.lowercased(),
            "nbf": issuedAt, "iat": issuedAt, "exp": issuedAt + 600,
        ]
        let signingInput = Self.segment(header) + "." + Self.segment(claims)
        do {
            // RFC 7518 §3.5: PS256 is RSASSA-PSS with SHA-256 and MGF1-SHA-256, salt as long as the hash.
            let padding: _RSA.Signing.Padding = algorithm == .ps256 ? .PSS : .insecurePKCS1v1_5
            let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: padding)
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw .misconfigured(reason: "cannot sign the client assertion (\(error))")
        }
    }

    private static func segment(_ object: [String: Any]) -> String {
        Base64URL.encode(JSONObject.data(object) ?? Data())
    }

    /// The DER bytes of the first `-----BEGIN label-----` block (RFC 7468).
    static func firstDERBlock(in pem: String, label: String) -> Data? {
        guard let begin = pem.firstRange(of: "-----BEGIN \(label)-----"),
            let end = pem[begin.upperBound...].firstRange(of: "-----END \(label)-----")
        else { return nil }
        let base64 = pem[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64))
    }
}
