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

/// #22 item 1 on a real `serve`, its clocks moved by the fault preload (``MachineFaults``): a wall clock stepped back
/// must not keep an expired token in use, and one stepped forward must cost one token, not one per request.
@Suite("Clock steps under a real serve: a token's life runs on the monotonic clock as well as the wall clock")
struct ClockStepTests {
    @Test("50 min pass while the wall clock steps back an hour: the token inside its margin is replaced; forward: once")
    func tokenLifeSurvivesClockSteps() async throws {
        let faults = try MachineFaults()
        try await withUpstream({ _ in .echo }) { upstream in
            let directory = try CommandLineTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/routes.json"
            try Data(
                #"{ "account": { "flow": "dev" }, "routes": [ { "prefix": "/api", "#
                    .appending(#""upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] } ] }"#).utf8
            ).write(to: URL(fileURLWithPath: file))
            let (_, output) = try await ChildProcess.withListening(
                ["serve", "--config", file, "--listen", "127.0.0.1:0", "--no-persist"],
                environment: try await faults.environment()
            ) { port, running in
                func token() async throws -> String? {
                    try await TestClient.send(port: port, uri: "/api/x").echo().header("authorization")
                }
                #expect(try await CommandLineTests.waitUntilHealthy(port: port))
                let first = try #require(try await token())
                // The dev issuer's tokens live an hour. 58 min pass while the wall clock is stepped back an hour: by
                // the wall clock the token has 62 min left, in truth 2 — inside its 5 min margin.
                try faults.setElapsed(seconds: 3480)
                try faults.setClockOffset(seconds: -3600)
                let second = try #require(try await token())
                // Compared as a Bool: a failed expectation prints its operands, and these are tokens.
                let reused = second == first
                #expect(!reused, "a token with 2 min of true life left was sent")
                // The wall clock an hour ahead of the truth: one new token, then that one for every request.
                try faults.setClockOffset(seconds: 3600)
                var after: Set<String> = []
                for _ in 0..<5 { after.insert(try #require(try await token())) }
                #expect(after.count == 1, "a token request per request after the wall clock stepped forward")
                let stillSecond = after.contains(second)
                #expect(!stillSecond, "the token the wall clock says has expired was sent")
                running.signal(SIGTERM)
            }
            #expect(output.status == 0, "\(output.stderr)")
        }
    }
}
