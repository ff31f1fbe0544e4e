import Foundation
import NIOCore
import NIOPosix
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

/// Out of file descriptors (issue #22 item 2): a real `serve` under a low `RLIMIT_NOFILE` and a crowd of clients.
/// It used to accept until `EMFILE`, then spin in `accept4` and die within seconds (SIGILL from libdispatch). Now
/// it serves as many as its cap allows, lets the rest wait in the backlog, and recovers when they leave.
@Suite("A serve out of descriptors backs off, caps its connections and recovers")
struct DescriptorLimitTests {
    @Test("200 connections against a limit of 96 descriptors: no crash, the cap holds, and it recovers")
    func crowdUnderLowLimit() async throws {
        let state = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state
        let command =
            "ulimit -n 96 && exec '\(CommandLineTests.binary)' serve --config '\(CommandLineTests.repositoryRoot)"
            + "/routes.json' --listen 127.0.0.1:0 --threads 2"
        let (_, output) = try await ChildProcess.withListening(
            executable: "/bin/sh", ["-c", command], environment: environment
        ) { port, running in
            #expect(try await CommandLineTests.waitUntilHealthy(port: port))
            // The crowd: connections that never send a byte (they wait for the idle limit), far more than 96.
            var crowd: [any Channel] = []
            for _ in 0..<200 {
                crowd.append(
                    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .connect(host: "127.0.0.1", port: port).get())
            }
            // Held: the proxy stays below its descriptor limit (it used to take every descriptor and then fail each
            // accept at once) and does not spin (it used to burn a core in accept4).
            let pid = running.processIdentifier
            let descriptors = try await Self.settledDescriptorCount(of: pid)
            #expect(descriptors < 96 - 16, "the proxy holds \(descriptors) of its 96 descriptors")
            let before = Self.cpuTicks(of: pid)
            try await Task.sleep(for: .seconds(1))
            let spent = Self.cpuTicks(of: pid) - before
            #expect(spent < 50, "the proxy spent \(spent) ticks of CPU in one second with a crowd waiting")
            // A request from behind the crowd: it is served once the cap has room, and meanwhile the proxy neither
            // spins nor dies. Close the others, then it is answered.
            async let late = TestClient.send(port: port, uri: "/-/health")
            for channel in crowd { try? await channel.close() }
            let response = try await late
            #expect(response.status == .ok)
            #expect(kill(running.processIdentifier, 0) == 0, "the proxy died")
            // Recovered: fresh requests are answered, and the metrics say the listener paused at its cap.
            let metrics = try await TestClient.send(port: port, uri: "/-/metrics")
            #expect(metrics.bodyText.contains(#"bearer_proxy_accept_paused_total{reason="connection_limit"}"#))
            running.signal(SIGTERM)
        }
        #expect(output.status == 0, "\(output.stderr.suffix(800))")
        #expect(!output.stderr.contains("Fatal error"), "\(output.stderr.suffix(800))")
    }

    /// The number of descriptors `pid` holds once it has stopped changing (ten equal readings 20 ms apart; at most
    /// five seconds of readings).
    static func settledDescriptorCount(of pid: pid_t) async throws -> Int {
        var last = -1
        var equal = 0
        for _ in 0..<250 where equal < 10 {
            let count = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
            equal = count == last ? equal + 1 : 0
            last = count
            try await Task.sleep(for: .milliseconds(20))
        }
        return last
    }

    /// User plus system CPU time of `pid`, in clock ticks (`/proc/PID/stat` fields 14 and 15).
    static func cpuTicks(of pid: pid_t) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command's closing parenthesis, field 3 (state) is the first: utime and stime are 12th and 13th.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }
}
