import Foundation
import Testing

@testable import BearerConfiguration
@testable import BearerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// While a `serve` holds a discovered route's rotated sign-in in memory only (its write failed: a full disk), every
/// view says so: its own `/-/status` with how the writes went, `/-/metrics`, and `status` in another process from
/// the lock the holder keeps; once the write lands, none of them does.
@Suite("Processes: a discovered route's unsaved rotation is shown in status, /-/status and /-/metrics")
struct DiscoveredUnsavedStatusTests {
    @Test("disk full: serve's /-/status and /-/metrics and another process's status name the unsaved sign-in")
    func shownWhileHeld() async throws {
        let faults = try MachineFaults()
        try await DiscoveredSignInTests.withServer { server, _ in
            try await DiscoveredRouteFiles.with(server) { files in
                #expect(try await files.run(["login", "mcp"]).status == 0)
                var environment = files.environment(browser: DiscoveredRouteFiles.idleBrowser)
                for (name, value) in try await faults.environment() { environment[name] = value }
                let (_, output) = try await ChildProcess.withListening(
                    ["serve", "--config", files.config, "--listen", "127.0.0.1:0"], environment: environment
                ) { port, serve in
                    #expect(try await TestClient.send(port: port, uri: "/mcp/x").status == .ok)
                    #expect(try await Self.ownState(port)["unsaved"] == nil)
                    #expect(try await Self.unsavedGauge(port) == 0)

                    try faults.setDiskFull(true)
                    server.revokeAccessTokens()
                    #expect(try await TestClient.send(port: port, uri: "/mcp/a").status == .ok)

                    // serve's own view: held here, with how its writes went (a path and a reason, no token).
                    let own = try await Self.ownState(port)
                    #expect(own["state"] as? String == "signed-in", "\(own)")
                    let held = try #require(own["unsaved"] as? [String: Any], "\(own)")
                    #expect(held["heldBy"] as? String == "this-process", "\(held)")
                    #expect((held["failedWrites"] as? Int ?? 0) >= 1, "\(held)")
                    let reason = try #require(held["lastWriteError"] as? String)
                    #expect(reason.contains("No space left"), "\(reason)")
                    for secret in server.issuedTokens { #expect(!reason.contains(secret)) }
                    #expect(try await Self.unsavedGauge(port) == 1)

                    // Another process's view, from the file and the holder's lock.
                    let status = try await files.run(["status", "--json"])
                    let document = try #require(
                        try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
                    let elsewhere = try DiscoveredRefusedSignInTests.discovered(document)
                    #expect(elsewhere["state"] as? String == "signed-in", "\(elsewhere)")
                    #expect((elsewhere["unsaved"] as? [String: Any])?["heldBy"] as? String == "another-process")
                    let text = try await files.run(["status"])
                    #expect(text.stdout.contains("holds its newest refresh token in memory only"), "\(text.stdout)")

                    // Room again: the retry writes it, and no view says unsaved any more.
                    try faults.setDiskFull(false)
                    // (The file is written a moment before memory lets go of it: both views are polled.)
                    try await withTimeout(waitingFor: "the unsaved rotation to be written") {
                        while true {
                            let shown = try await Self.ownState(port)["unsaved"] != nil
                            if !shown, try await Self.unsavedGauge(port) == 0 { break }
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                    let after = try await files.run(["status", "--json"])
                    let afterDocument = try #require(
                        try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])
                    #expect(try DiscoveredRefusedSignInTests.discovered(afterDocument)["unsaved"] == nil)
                    serve.signal(SIGTERM)
                }
                #expect(output.status == 0, "\(output.stderr)")
            }
        }
    }

    /// The route's sign-in as `serve`'s `/-/status` shows it.
    static func ownState(_ port: Int) async throws -> [String: Any] {
        try DiscoveredRefusedSignInTests.discovered(
            try await TestClient.send(port: port, uri: "/-/status").jsonObject())
    }

    /// `bearer_proxy_discovered_signins_unsaved` as `/-/metrics` gives it.
    static func unsavedGauge(_ port: Int) async throws -> Double? {
        let text = try await TestClient.send(port: port, uri: "/-/metrics").bodyText
        let line = text.split(separator: "\n").first { $0.hasPrefix("bearer_proxy_discovered_signins_unsaved ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }
}
