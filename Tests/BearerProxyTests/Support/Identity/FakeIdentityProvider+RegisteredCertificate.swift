import Crypto

extension FakeIdentityProvider {
    /// A certificate registered on a client, as Entra keeps it: the public key and the thumbprints a client
    /// assertion's header names it by (`x5t#S256` = base64url SHA-256 of the DER, `x5t` = base64url SHA-1).
    struct RegisteredCertificate: Sendable, Equatable {
        /// The public key, PEM (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo).
        var publicKeyPEM: String
        /// base64url(SHA-256(certificate DER)), unpadded.
        var sha256Thumbprint: String
        /// base64url(SHA-1(certificate DER)), unpadded.
        var sha1Thumbprint: String

        init(publicKeyPEM: String, sha256Thumbprint: String, sha1Thumbprint: String) {
            self.publicKeyPEM = publicKeyPEM
            self.sha256Thumbprint = sha256Thumbprint
            self.sha1Thumbprint = sha1Thumbprint
        }

        /// Computes both thumbprints from the certificate's DER.
        init(publicKeyPEM: String, certificateDER: [UInt8]) {
            self.init(
                publicKeyPEM: publicKeyPEM,
                sha256Thumbprint: FakeIdentityJWT.base64URL(SHA256.hash(data: certificateDER)),
                sha1Thumbprint: FakeIdentityJWT.base64URL(Insecure.SHA1.hash(data: certificateDER)))
        }
    }
}
