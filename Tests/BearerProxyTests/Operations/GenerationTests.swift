import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerHTTP
@testable import BearerJSON
@testable import BearerOperations
@testable import BearerRuntime
@testable import BearerSignIn
@testable import BearerTelemetry
@testable import BearerTokens

/// A reload installs a new generation; an exchange keeps the one it began with, and the old account's client is
/// released only once the last of its exchanges has ended (issue: "A generation").
@Suite("Reload: an exchange keeps its generation; the old account is released after its last exchange")
struct GenerationTests {
    /// routes.json with `account` and the route `/api` to `upstream`, and `/more` too when `more` is set.
    static func writeConfiguration(_ account: String, upstream: RawUpstream, more: Bool = false, to file: URL) throws {
        var routes = [RawUpstream.route(to: upstream)]
        if more {
            routes.append(
                #"{ "prefix": "/more", "upstream": "\#(upstream.baseURL)/more", "scopes": ["api://more/R"] }"#)
        }
        let json = """
            { "listen": "127.0.0.1:0", "account": \(account),
              "routes": [ \(routes.joined(separator: ", ")) ] }
            """
        try Data(json.utf8).write(to: file)
    }

    /// A scratch directory for one test's routes.json.
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bp-gen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A proxy for `file`'s configuration (a `refresh-token` account on `provider`), run through `body` and shut
    /// down afterwards, whether `body` throws or not.
    static func withProxy(
        _ file: URL, provider: FakeIdentityProvider, _ body: (RunningProxy) async throws -> Void
    ) async throws {
        let environment = TestAccounts.environment(provider)
        let proxy = try await RunningProxy.start(
            configuration: try Configuration.load(path: file.path, environment: environment),
            stateDirectory: nil, environment: environment, threads: 1, logger: ProxyHarness.silentLogger)
        do {
            try await body(proxy)
        } catch {
            try? await proxy.shutdownWithinLimit()
            throw error
        }
        try await proxy.shutdownWithinLimit()
    }

    /// The first request is held until the test releases it; every later one is answered at once.
    static let holdFirst: @Sendable (RawRequest) -> RawUpstream.Answer = { request in
        request.connection == 1 ? .held : .respond(status: 200, body: "ok")
    }

    /// A 401 that makes the proxy replay the held request with a new token (SPEC §8).
    static let rejectToken = RawUpstream.Answer.respond(
        status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#), ("Connection", "close")])

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
                    async let answer = TestClient.send(port: proxy.server.port, uri: "/api/x")
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
                    let after = try await TestClient.send(port: proxy.server.port, uri: "/api/y")
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

    @Test("an exchange that began two reloads earlier keeps its account alive for its token replay (#22 item 5)")
    func accountOutlivesTwoReloads() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withIdentityProvider { provider in
            try await RawUpstream.with(answer: Self.holdFirst) { upstream in
                let file = directory.appendingPathComponent("routes.json")
                let account = TestAccounts.refreshToken(provider)
                try Self.writeConfiguration(account, upstream: upstream, to: file)
                try await Self.withProxy(file, provider: provider) { proxy in
                    async let answer = TestClient.send(port: proxy.server.port, uri: "/api/x")
                    try await upstream.waitForRequests(1)
                    // Reload one keeps the account (a route added); reload two changes it. The held exchange belongs
                    // to the generation before both.
                    try Self.writeConfiguration(account, upstream: upstream, more: true, to: file)
                    #expect(await proxy.reload(from: file.path) == .applied(accountChanged: false))
                    try Self.writeConfiguration(#"{ "flow": "dev" }"#, upstream: upstream, to: file)
                    #expect(await proxy.reload(from: file.path) == .applied(accountChanged: true))
                    // What the once-a-second maintenance does: the middle generation has no exchange and goes; the
                    // first keeps the refresh-token account alive.
                    await proxy.releaseRetiredAccounts()
                    #expect(proxy.retiringGenerations == 1)
                    upstream.release(with: Self.rejectToken)
                    let response = try await answer
                    #expect(response.status == .ok, "the replay lost its account: \(response.bodyText)")
                    #expect(provider.tokenRequests.count == 2, "the replay did not get its token from the old account")
                    // Once the exchange has ended, its generation and account are let go.
                    var released = false
                    for _ in 0..<400 where !released {
                        await proxy.releaseRetiredAccounts()
                        released = proxy.retiringGenerations == 0
                        if !released { try await Task.sleep(for: .milliseconds(25)) }
                    }
                    #expect(released, "the drained generation was never released")
                }
            }
        }
    }

    @Test(
        "a reload that changes the account does not wait for the old exchanges: the next reload applies at once (#22 item 4)"
    )
    func reloadDoesNotWaitForOldExchanges() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withIdentityProvider { provider in
            try await RawUpstream.with(answer: Self.holdFirst) { upstream in
                let file = directory.appendingPathComponent("routes.json")
                try Self.writeConfiguration(TestAccounts.refreshToken(provider), upstream: upstream, to: file)
                try await Self.withProxy(file, provider: provider) { proxy in
                    let port = proxy.server.port
                    async let answer = TestClient.send(port: port, uri: "/api/x")
                    try await upstream.waitForRequests(1)
                    // Before #22 the first reload waited for the held exchange (up to 60 s) before it returned, and
                    // every later SIGHUP waited behind it.
                    try Self.writeConfiguration(#"{ "flow": "dev" }"#, upstream: upstream, to: file)
                    let first = try await withTimeout(.seconds(20), waitingFor: "a reload that changes the account") {
                        await proxy.reload(from: file.path)
                    }
                    #expect(first == .applied(accountChanged: true))
                    try Self.writeConfiguration(#"{ "flow": "dev" }"#, upstream: upstream, more: true, to: file)
                    let second = try await withTimeout(.seconds(20), waitingFor: "the next reload") {
                        await proxy.reload(from: file.path)
                    }
                    #expect(second == .applied(accountChanged: false))
                    #expect(try await TestClient.send(port: port, uri: "/more/y").status == .ok)
                    #expect(proxy.retiringGenerations >= 1, "the held exchange's generation was let go")
                    upstream.release(with: .respond(status: 200, body: "late"))
                    #expect(try await answer.status == .ok)
                }
            }
        }
    }
}
