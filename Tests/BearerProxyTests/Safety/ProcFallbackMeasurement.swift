import Foundation
import NIOCore
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerRuntime

/// What the peer user check's `/proc/net/tcp` fallback costs where netlink is unavailable, on one event loop: a burst
/// of new connections looked up in a busy host's table (20,000 sockets), and meanwhile the latency of an open
/// keep-alive client on the same loop. A measurement, not a test — it asserts nothing about time and runs only when
/// asked: `BEARER_PROXY_MEASURE=1 swift test --filter ProcFallbackMeasurement` (numbers in docs/benchmarks.md).
@Suite(
    "Measurement: the /proc fallback's cost to the event loop",
    .enabled(
        if: ProcessInfo.processInfo.environment["BEARER_PROXY_MEASURE"] == "1",
        "a measurement: run with BEARER_PROXY_MEASURE=1"))
struct ProcFallbackMeasurement {
    /// Sockets in the fake table, and new connections in the burst.
    static let tableLines = 20_000
    static let burst = 100

    /// A table of `lines` TIME_WAIT sockets between loopback ports, printed as the kernel prints them (proc(5):
    /// each line padded to 149 characters), none of them a connection the measurement makes.
    static func busyTable(lines: Int) -> String {
        var text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
        text += String(repeating: " ", count: 149 - text.count) + "\n"
        for index in 0..<lines {
            let line =
                String(
                    format: "%4d: 0100007F:%04X 0100007F:%04X 06 00000000:00000000 03:00001770 00000000", index,
                    1024 + index % 30_000, 80)
                + "     0        0 0 3 0000000000000000"
            text += line + String(repeating: " ", count: max(0, 149 - line.count)) + "\n"
        }
        return text
    }

    /// Limits no client here reaches, even on a loop held for seconds: the measurement is of delay, not of closing.
    static let patient: ProxyTimeouts = {
        var timeouts = ProxyTimeouts()
        timeouts.requestHead = .seconds(600)
        timeouts.clientIdle = .seconds(600)
        return timeouts
    }()

    @Test("100 new connections against a 20,000-socket table, and a keep-alive client's latency meanwhile")
    func burst() async throws {
        let base = try UnixSocketListenerTests.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let table = base + "/tcp"
        try Self.busyTable(lines: Self.tableLines).write(toFile: table, atomically: true, encoding: .utf8)
        let socket = try UnixSocketPath(base + "/proxy.sock")
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProcFallbackLoopTests.withOneLoopProxy(
                upstream: upstream, socket: socket, table: table, timeouts: Self.patient
            ) { proxy in
                try await Self.measure(proxy, socket: socket.path)
            }
        }
    }

    private static func measure(_ proxy: RunningProxy, socket: String) async throws {
        let keepAlive = try await TestConnection.open(unixSocket: socket)
        defer { keepAlive.channel.close(promise: nil) }
        let idle = try await Self.latencies(of: keepAlive, count: 50)
        let clock = ContinuousClock()
        let (burstTime, busy) = try await withThrowingTaskGroup(of: [Duration].self) { group in
            group.addTask {
                // The keep-alive client's requests, one after another, until the burst is over (cancelling the
                // task ends the request in flight; that one is not counted).
                var result: [Duration] = []
                while !Task.isCancelled {
                    do {
                        result.append(try await Self.timed(keepAlive))
                    } catch {
                        if Task.isCancelled { break }
                        throw error
                    }
                }
                return result
            }
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { burst in
                for _ in 0..<Self.burst {
                    burst.addTask {
                        // Not in the table: each is looked up to the table's end and closed (the worst case).
                        let connection = try await TestConnection.open(port: proxy.server.port)
                        try await connection.waitForClose(timeout: .seconds(600))
                    }
                }
                try await burst.waitForAll()
            }
            let elapsed = clock.now - start
            group.cancelAll()
            return (elapsed, try await group.next() ?? [])
        }
        print(
            """
            proc fallback: \(Self.burst) new connections, \(Self.tableLines)-line table: \(burstTime)
            keep-alive /-/health idle: median \(Self.median(idle)), max \(idle.max() ?? .zero)
            keep-alive /-/health during the burst: \(busy.count) requests, median \(Self.median(busy)), \
            max \(busy.max() ?? .zero)
            """)
    }

    private static func latencies(of connection: TestConnection, count: Int) async throws -> [Duration] {
        var result: [Duration] = []
        for _ in 0..<count { result.append(try await Self.timed(connection)) }
        return result
    }

    private static func timed(_ connection: TestConnection) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await connection.send(uri: "/-/health", timeout: .seconds(600))
        guard response.status == .ok else { throw TestSupportError.shutDown }
        return clock.now - start
    }

    private static func median(_ values: [Duration]) -> Duration {
        values.isEmpty ? .zero : values.sorted()[values.count / 2]
    }
}
