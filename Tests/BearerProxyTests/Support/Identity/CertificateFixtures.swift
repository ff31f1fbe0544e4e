import Crypto
import Foundation

/// The test-only client certificates in `Fixtures/certs/` (regenerate with `Fixtures/certs/make.sh`).
///
/// `client` (CN=bearer-proxy-test-client) is registered on `FakeIdentityProvider.Client.confidentialClient`;
/// `other` (CN=bearer-proxy-test-other) is an unrelated RSA 2048 pair for wrong-key and wrong-thumbprint tests.
/// Keys are PKCS#8 PEM; certificates are self-signed PEM, valid 100 years.
enum CertificateFixtures {
    /// One key pair and its certificate.
    struct Pair: Sendable {
        /// The file name stem (`client`, `other`).
        let name: String

        /// Absolute path of the certificate (PEM).
        var certificateFile: String {
            CertificateFixtures.directory.appendingPathComponent("\(self.name).pem").path
        }

        /// Absolute path of the private key (PKCS#8 PEM, unencrypted).
        var keyFile: String {
            CertificateFixtures.directory.appendingPathComponent("\(self.name)-key.pem").path
        }

        /// Absolute path of the public key (SubjectPublicKeyInfo PEM).
        var publicKeyFile: String {
            CertificateFixtures.directory.appendingPathComponent("\(self.name)-public.pem").path
        }

        /// The certificate PEM text.
        var certificatePEM: String {
            CertificateFixtures.read(self.certificateFile)
        }

        /// The public key PEM text (`-----BEGIN PUBLIC KEY-----`), what `FakeIdentityProvider` registers.
        var publicKeyPEM: String {
            CertificateFixtures.read(self.publicKeyFile)
        }

        /// The certificate's DER bytes.
        var certificateDER: [UInt8] {
            guard let der = CertificateFixtures.der(fromPEM: self.certificatePEM) else {
                fatalError("\(self.certificateFile) is not a PEM certificate")
            }
            return der
        }

        /// base64url(SHA-256(DER)), unpadded: the `x5t#S256` header of PS256 assertions.
        var sha256Thumbprint: String {
            FakeIdentityJWT.base64URL(SHA256.hash(data: self.certificateDER))
        }

        /// base64url(SHA-1(DER)), unpadded: the `x5t` header of RS256 assertions.
        var sha1Thumbprint: String {
            FakeIdentityJWT.base64URL(Insecure.SHA1.hash(data: self.certificateDER))
        }

        /// The certificate as `FakeIdentityProvider` registers it on a client.
        var registration: FakeIdentityProvider.RegisteredCertificate {
            FakeIdentityProvider.RegisteredCertificate(
                publicKeyPEM: self.publicKeyPEM, certificateDER: self.certificateDER)
        }
    }

    /// The `certs` fixtures folder inside the test bundle's copied `Fixtures` resource.
    static var directory: URL {
        guard let fixtures = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("the test bundle has no Fixtures resource (Package.swift: resources: [.copy(\"Fixtures\")])")
        }
        return fixtures.appendingPathComponent("certs", isDirectory: true)
    }

    /// The certificate registered with the fake (CN=bearer-proxy-test-client).
    static let client = Pair(name: "client")

    /// An unrelated certificate (CN=bearer-proxy-test-other), registered nowhere by default.
    static let other = Pair(name: "other")

    /// The DER of the first PEM block in `pem` (nil if there is none).
    static func der(fromPEM pem: String) -> [UInt8]? {
        var body = ""
        var inside = false
        for line in pem.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("-----BEGIN ") {
                inside = true
            } else if line.hasPrefix("-----END ") {
                break
            } else if inside {
                body += line.trimmingCharacters(in: .whitespaces)
            }
        }
        return Data(base64Encoded: body).map { [UInt8]($0) }
    }

    private static func read(_ path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            fatalError("cannot read the fixture \(path) (regenerate with Fixtures/certs/make.sh)")
        }
        return text
    }
}
