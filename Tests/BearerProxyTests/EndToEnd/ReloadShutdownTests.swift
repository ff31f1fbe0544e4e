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

/// #22 item 4 on a real `serve`: a SIGHUP that changes the account while an old exchange is still running must not
/// hold up the next SIGHUP or a SIGTERM. Before the fix the reload waited inside the reloader for the old exchange
/// (up to 60 s): the next SIGHUP was not applied, and after SIGTERM the proxy went on accepting and answering.
@Suite("Reload beside, not inside: a reload waiting for old exchanges holds up neither the next reload nor SIGTERM")
struct ReloadShutdownTests {
    static let tokenVariable = "RELOAD_TEST_STATIC_TOKEN"

    static func write(_ file: String, account: String, upstream: RawUpstream, more: Bool) throws {
        var routes = [#"{ "prefix": "/api", "upstream": "\#(upstream.baseURL)/api", "scopes": ["api://a/R"] }"#]
        if more {
            routes.append(#"{ "prefix": "/more", "upstream": "\#(upstream.baseURL)/more", "scopes": ["api://m/R"] }"#)
        }
        let json = #"{ "account": \#(account), "routes": [ \#(routes.joined(separator: ", ")) ] }"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
    }

    /// Polls `check` every 25 ms until it holds, for at most `attempts` rounds; whether it held.
    static func eventually(attempts: Int = 400, _ check: () async -> Bool) async throws -> Bool {
        for _ in 0..<attempts {
            if await check() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test("SIGHUP changes the account while a request is held; a second SIGHUP applies; SIGTERM closes the listener")
    func reloadsAndShutdownGoAhead() async throws {
        try await RawUpstream.with(answer: GenerationTests.holdFirst) { upstream in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/routes.json"
            try Self.write(file, account: #"{ "flow": "dev" }"#, upstream: upstream, more: false)
            let (_, output) = try await ChildProcess.withListening(
                ["serve", "--config", file, "--listen", "127.0.0.1:0", "--no-persist"],
                environment: [Self.tokenVariable: "static-token-for-the-reload-test"]
            ) { port, running in
                #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                async let held = try? TestClient.send(port: port, uri: "/api/held")
                try await upstream.waitForRequests(1)
                // Reload one changes the account (dev → static); the held exchange keeps the dev generation.
                try Self.write(
                    file, account: #"{ "flow": "static", "tokenEnv": "\#(Self.tokenVariable)" }"#, upstream: upstream,
                    more: false)
                running.signal(SIGHUP)
                let switched = try await Self.eventually {
                    let status = try? await TestClient.send(port: port, uri: "/-/status")
                    return status?.bodyText.contains("\"static\"") == true
                }
                #expect(switched, "the first reload was not applied")
                // Reload two adds a route: applied at once, although the held exchange has not ended.
                try Self.write(
                    file, account: #"{ "flow": "static", "tokenEnv": "\#(Self.tokenVariable)" }"#, upstream: upstream,
                    more: true)
                running.signal(SIGHUP)
                let added = try await Self.eventually {
                    (try? await TestClient.send(port: port, uri: "/more/x"))?.status == .ok
                }
                #expect(added, "the second SIGHUP was not applied while the first reload's old exchange ran")
                // SIGTERM: the listener closes at once, though the held exchange is still running.
                running.signal(SIGTERM)
                let closed = try await Self.eventually {
                    (try? await TestClient.send(port: port, uri: "/-/health", timeout: .seconds(1))) == nil
                }
                #expect(closed, "after SIGTERM the proxy still accepted and answered")
                upstream.release(with: .respond(status: 200, body: "late"))
                _ = await held
            }
            #expect(output.status == 0, "\(output.stderr)")
        }
    }
}
