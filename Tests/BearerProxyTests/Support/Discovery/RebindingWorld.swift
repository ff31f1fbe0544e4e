import Foundation
import NIOSSL

@testable import BearerConfiguration
@testable import BearerSignIn

/// Two TLS servers on one port, both presenting a certificate for `*.rebind.test` (`Fixtures/rebinding/`): `server`
/// on 127.0.0.2, which the tests' policy counts as a global address — no test may send anything off this machine —
/// and `victim` on 127.0.0.1, the internal service a rebinding attacker aims at. The names under `rebind.test` are
/// resolved only by the test's resolver (nothing else knows them), so a request reaches either server only through
/// an address that resolver gave; one that reaches the victim is the attack succeeding.
struct RebindingWorld {
    /// Stands in for a global address.
    static let global = IPAddress.v4([127, 0, 0, 2])
    /// The internal service's address.
    static let internalAddress = IPAddress.v4([127, 0, 0, 1])
    /// Nothing listens there: a connection to it is refused.
    static let refusing = IPAddress.v4([127, 0, 0, 3])

    let server: FakeUpstream
    let victim: FakeUpstream

    var port: Int { server.port }

    /// The CA that signed the servers' certificate.
    static var caFile: String {
        TLSFixtures.directory.deletingLastPathComponent().appendingPathComponent("rebinding/ca.pem").path
    }

    /// `https://NAME.rebind.test:PORT` + `path`.
    func url(_ name: String, _ path: String = "") -> String { "https://\(name).rebind.test:\(port)\(path)" }

    /// The SSRF rule of a route whose upstream is `https://mcp.rebind.test:PORT/mcp` (remote), with `resolver`, and
    /// ``global`` counted global.
    func policy(_ resolver: any HostResolver, settings: DiscoverySettings = DiscoverySettings()) -> AddressPolicy {
        AddressPolicy(upstream: upstream, settings: settings, resolver: resolver) { address in
            address == Self.global || address == Self.refusing ? .global : address.reach
        }
    }

    var upstream: Upstream { Upstream(parsing: url("mcp", "/mcp"))! }

    /// Runs `body` with both servers up: `server` answering each path from `pages` (`{origin}` becomes
    /// `https://` + the request's `Host`, `{port}` the port), the victim answering 200 to anything.
    static func with<T>(
        pages: [String: FakeDiscoveryPage], _ body: (RebindingWorld) async throws -> T
    ) async throws -> T {
        let context = try tlsContext()
        let victim = try await FakeUpstream.start(tls: true, host: "127.0.0.1", tlsContext: context) { _ in
            .respond(status: 200, text: "the internal service")
        }
        let server: FakeUpstream
        do {
            server = try await FakeUpstream.start(tls: true, host: "127.0.0.2", port: victim.port, tlsContext: context)
            {
                head in
                let host = head.header("host") ?? ""
                let port = String(host.split(separator: ":").last ?? "")
                let path = String(head.uri.prefix { $0 != "?" })
                guard let page = pages[path] else { return .respond(status: 404, text: "no such page") }
                func filled(_ text: String) -> String {
                    text.replacingOccurrences(of: "{origin}", with: "https://" + host)
                        .replacingOccurrences(of: "{port}", with: port)
                }
                return .respond(
                    status: page.status, headers: page.headers.map { ($0.0, filled($0.1)) }, text: filled(page.body))
            }
        } catch {
            try? await victim.shutdown()
            throw error
        }
        let world = RebindingWorld(server: server, victim: victim)
        do {
            let result = try await body(world)
            try await server.shutdown()
            try await victim.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            try? await victim.shutdown()
            throw error
        }
    }

    private static func tlsContext() throws -> NIOSSLContext {
        let directory = TLSFixtures.directory.deletingLastPathComponent().appendingPathComponent("rebinding")
        let chain = try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("server.pem").path).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: directory.appendingPathComponent("server-key.pem").path, format: .pem)
        return try NIOSSLContext(
            configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
    }
}
