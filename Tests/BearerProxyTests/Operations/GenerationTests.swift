import Foundation
import Testing

@testable import BearerProxy

/// A reload installs a new generation; an exchange keeps the one it began with, and the old account's client is
/// released only once the last of its exchanges has ended (issue: "A generation").
@Suite("Reload: an exchange keeps its generation; the old account is released after its last exchange")
struct GenerationTests {
    static func writeConfiguration(_ account: String, upstream: RawUpstream, to file: URL) throws {
        let json = """
            { "listen": "127.0.0.1:0", "account": \(account),
              "routes": [ \(RawUpstream.route(to: upstream)) ] }
            """
        try Data(json.utf8).write(to: file)
    }

    @Test("a reload that changes the account mid-request: the request's token replay still uses the old account")
    func oldAccountServesItsExchanges() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bp-gen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withIdentityProvider { provider in
            try await RawUpstream.with(answer: { request in
                // The first request is held until the test has reloaded; its replay (a new connection) is answered.
                request.connection == 1 ? .held : .respond(status: 200, body: "ok")
            }) { upstream in
                let file = directory.appendingPathComponent("routes.json")
                let environment = TestAccounts.environment(provider)
                try Self.writeConfiguration(TestAccounts.refreshToken(provider), upstream: upstream, to: file)
                let proxy = try await RunningProxy.start(
                    configuration: try Configuration.load(path: file.path, environment: environment),
                    stateDirectory: nil, environment: environment, threads: 1, logger: ProxyHarness.silentLogger)
                do {
                    async let answer = TestClient.send(port: proxy.server.localAddress.port, uri: "/api/x")
                    try await upstream.waitForRequests(1)
                    try Self.writeConfiguration(#"{ "flow": "dev" }"#, upstream: upstream, to: file)
                    async let reloaded = proxy.reload(from: file.path)
                    // The reload has installed the dev account (or is about to); the held request still belongs to
                    // the refresh-token generation, so its replay asks that account's provider.
                    upstream.release(
                        with: .respond(
                            status: 401,
                            headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#), ("Connection", "close")]))
                    let response = try await answer
                    #expect(response.status == .ok, "\(response.bodyText)")
                    #expect(await reloaded == .applied(accountChanged: true))
                    #expect(provider.tokenRequests.count == 2, "the replay did not get its token from the old account")
                    // New requests belong to the new generation: dev tokens, no provider request.
                    let after = try await TestClient.send(port: proxy.server.localAddress.port, uri: "/api/y")
                    #expect(after.status == .ok)
                    #expect(provider.tokenRequests.count == 2)
                } catch {
                    try? await proxy.shutdownWithinLimit()
                    throw error
                }
                try await proxy.shutdownWithinLimit()
            }
        }
    }
}
