import Foundation
import NIOSSL

/// The test-only TLS material in `Fixtures/tls/` (regenerate with `Fixtures/tls/make.sh`).
///
/// `ca.pem` is a test CA; `server.pem`/`server-key.pem` is a certificate it signed for `IP:127.0.0.1` and
/// `DNS:localhost`. Point the proxy's `"tls": {"caFile": TLSFixtures.caFile}` at the CA to reach a
/// `FakeUpstream.start(tls: true, ...)`.
enum TLSFixtures {
    /// The `tls` fixtures folder inside the test bundle's copied `Fixtures` resource.
    static var directory: URL {
        guard let fixtures = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("the test bundle has no Fixtures resource (Package.swift: resources: [.copy(\"Fixtures\")])")
        }
        return fixtures.appendingPathComponent("tls", isDirectory: true)
    }

    /// Absolute path of the test CA certificate (PEM).
    static var caFile: String {
        directory.appendingPathComponent("ca.pem").path
    }

    /// Absolute path of the server certificate (PEM), valid for 127.0.0.1 and localhost.
    static var serverCertificateFile: String {
        directory.appendingPathComponent("server.pem").path
    }

    /// Absolute path of the server certificate's private key (PEM, PKCS#8).
    static var serverKeyFile: String {
        directory.appendingPathComponent("server-key.pem").path
    }

    /// A server context presenting the fixture certificate.
    static func serverContext() throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(serverCertificateFile).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: serverKeyFile, format: .pem)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(key))
        return try NIOSSLContext(configuration: configuration)
    }

    /// A client context that trusts only the test CA (full certificate and hostname verification).
    static func clientContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(caFile)
        configuration.certificateVerification = .fullVerification
        return try NIOSSLContext(configuration: configuration)
    }
}
