import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// A discovered route's refresh token rotated while the disk is full, on a real `serve` whose writes the fault preload
/// fails with ENOSPC (``MachineFaults``), against an authorization server that accepts each refresh token once: the
/// file keeps the refresh token the server has just retired, so the rotated one must be kept in memory, used by the
/// process that holds it — a second `serve` does not redeem the retired one — and written once the disk has room, as
/// the account's unsaved rotation is.
@Suite("Processes: a discovered route's rotation that cannot be written is kept, used and written later")
struct DiscoveredUnsavedRotationTests {
    @Test("disk full: serve keeps using and refreshing with the rotated refresh token, and the file catches up")
    func diskFull() async throws {
        let faults = try MachineFaults()
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                let key = try #require(try files.store.routeKey(upstream: server.resource))
                let signedIn = try #require(try files.store.signIn(key)?.refreshToken)
                var environment = files.environment(browser: DiscoveredRouteFiles.idleBrowser)
                for (name, value) in try await faults.environment() { environment[name] = value }
                let (_, output) = try await ChildProcess.withListening(
                    ["serve", "--config", files.config, "--listen", "127.0.0.1:0"], environment: environment
                ) { port, serve in
                    #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                    #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)

                    try faults.setDiskFull(true)
                    // The upstream refuses the token: serve refreshes (the server retires the file's refresh token),
                    // and the write of the rotation fails.
                    server.revokeAccessTokens()
                    #expect(try await TestClient.send(port: port, uri: "/mcp/a").status == .ok)
                    #expect(try files.store.signIn(key)?.refreshToken == signedIn)
                    let rotated = try #require(server.bearers.last)

                    // Memory's token stays the one sent across the once-a-second check of the files, which must
                    // not put the file's older token back.
                    let checked = ContinuousClock.now + .seconds(2)
                    while ContinuousClock.now < checked {
                        #expect(try await TestClient.send(port: port, uri: "/mcp/b").status == .ok)
                        #expect(server.bearers.last == rotated)
                        try await Task.sleep(for: .milliseconds(100))
                    }

                    // The next refresh redeems memory's refresh token, not the retired one in the file.
                    server.revokeAccessTokens()
                    let again = try await TestClient.send(port: port, uri: "/mcp/c")
                    #expect(again.status == .ok, "\(again.bodyText)")
                    let redeemed = server.tokenForms.filter { $0["grant_type"] == "refresh_token" }.count
                    #expect(redeemed == 2)

                    // A second serve, whose token from the file the upstream refuses, does not redeem the retired
                    // refresh token the file still shows (invalid_grant would sign the route out): 503 meanwhile.
                    try await DiscoveredProcessesTests.withServe(files) { other in
                        let refused = try await TestClient.send(port: other, uri: "/mcp/other")
                        #expect(refused.status == .serviceUnavailable, "\(refused.bodyText)")
                        #expect(refused.bodyText.contains("could not save yet"), "\(refused.bodyText)")
                        #expect(server.tokenForms.filter { $0["grant_type"] == "refresh_token" }.count == redeemed)
                        #expect(try files.store.signIn(key)?.refreshToken == signedIn)

                        // Room again: the holder writes its rotation, and the second serve uses it.
                        try faults.setDiskFull(false)
                        try await withTimeout(waitingFor: "the second serve to use the saved rotation") {
                            while try await TestClient.send(port: other, uri: "/mcp/other").status != .ok {
                                try await Task.sleep(for: .milliseconds(100))
                            }
                        }
                    }

                    // The retry has written the newest rotation.
                    let newest = try #require(server.issuedTokens.last)
                    try await withTimeout(waitingFor: "the unsaved rotation to be written") {
                        while try files.store.signIn(key)?.refreshToken != newest {
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                    serve.signal(SIGTERM)
                }
                #expect(output.status == 0, "\(output.stderr)")
                #expect(output.stderr.contains("could not be stored"), "\(output.stderr)")
                for secret in server.issuedTokens { #expect(!output.stderr.contains(secret)) }

                // A new serve signs nothing out: it refreshes with the saved refresh token.
                try await DiscoveredProcessesTests.withServe(files) { port in
                    server.revokeAccessTokens()
                    let answer = try await TestClient.send(port: port, uri: "/mcp/d")
                    #expect(answer.status == .ok, "\(answer.bodyText)")
                }
            }
        }
    }
}
