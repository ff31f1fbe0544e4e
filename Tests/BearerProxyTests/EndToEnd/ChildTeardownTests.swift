import Foundation
import Subprocess
import Testing

/// Within a run, a `bearer-proxy` child never outlives the test that started it: the helpers kill it when their body
/// throws, and swift-subprocess kills it the moment its scope is cancelled — a failed sibling, or a
/// ``withTimeout(_:waitingFor:_:)`` giving up on its body, which then goes on unawaited. Only a test process that
/// dies mid-run orphans its children; `.ci/as-user` runs the tests in a PID namespace that ends them then.
@Suite("A child process ends with its scope")
struct ChildTeardownTests {
    @Test("a serve whose scope is cancelled while the test reads its output is killed at once, not by the watchdog")
    func cancelledWhileReading() async throws {
        let state = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": state]) { $1 }
        let (listening, heard) = AsyncStream<Int>.makeStream()
        let arguments = [
            "serve", "--config", CommandLineTests.repositoryRoot + "/routes.json", "--listen", "127.0.0.1:0",
        ]
        let (bound, outcome) = await withTaskGroup(of: Result<WatchedChild.Output, any Error>.self) { group in
            group.addTask {
                // A serve that never says it listens ends the wait below too.
                defer { heard.finish() }
                do {
                    return .success(
                        try await WatchedChild.run(arguments, environment: environment) { line in
                            if let port = ChildProcess.listeningPort(in: line) { heard.yield(port) }
                        })
                } catch {
                    return .failure(error)
                }
            }
            let port = await listening.first { _ in true }
            // The test's scope ends — a failure elsewhere, or a withTimeout giving up — while the serve runs on.
            group.cancelAll()
            return (port, await group.next() ?? .failure(CancellationError()))
        }
        // Ended by the cancellation: SIGKILL at once, never the watchdog's time-out (TestSupportError.timedOut).
        switch outcome {
        case .success(let output):
            #expect(output.status == .signaled(SIGKILL), "\(output.stderr)")
        case .failure(let error):
            #expect(!(error is TestSupportError), "\(error)")
        }
        // Gone, not merely unawaited: nothing listens on its port any more.
        let port = try #require(bound, "the serve never said where it listens")
        await #expect(throws: (any Error).self) {
            try await TestClient.send(port: port, uri: "/-/health", timeout: .seconds(5))
        }
    }
}
