import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerRuntime

/// Where netlink is unavailable the peer user check reads `/proc/net/tcp`, a file that lists every socket of the
/// host: with a busy host's table that takes milliseconds per new connection. It must never hold the event loop:
/// the table is read elsewhere while the new connection waits, unread, and the loop serves everyone else. And the
/// file is read in pieces, matched without splitting its lines, up to the line that matches.
@Suite("Only its owner: the /proc fallback, read off the event loop")
struct ProcFallbackLoopTests {
    /// The first line of the kernel's table (proc(5)).
    static let header =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

    /// A table line for the socket whose local end is 127.0.0.1:`local` and remote end 127.0.0.1:`remote`, owned by
    /// `uid`, as the kernel prints it on a little-endian machine (each address word in host order).
    static func line(_ number: Int, local: Int, remote: Int, state: String = "01", uid: UInt32) -> String {
        String(
            format: "%4d: 0100007F:%04X 0100007F:%04X %@ 00000000:00000000 00:00000000 00000000 %5u        0 %d 1 0",
            number, local, remote, state, uid, 40_000 + number) + "\n"
    }

    /// `count` TIME_WAIT sockets between loopback ports other than `avoiding`: a busy host's table.
    static func busyLines(_ count: Int, avoiding ports: Set<Int>) -> String {
        var text = ""
        text.reserveCapacity(count * 110)
        var port = 1024
        for number in 0..<count {
            while ports.contains(port) { port += 1 }
            text += line(number, local: port, remote: 443, state: "06", uid: 0)
            port = port >= 60_000 ? 1024 : port + 1
        }
        return text
    }

    @Test("the table is read in pieces: a match anywhere, across a read's end or on a last line without newline")
    func tableReadInPieces() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bp-tcp-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let table = ProcNetTCP(tcp: path, tcp6: path)
        func ends(_ peer: Int, _ proxy: Int) -> SocketEnds {
            SocketEnds(
                family: .inet, peerAddress: [127, 0, 0, 1], peerPort: UInt16(peer), localAddress: [127, 0, 0, 1],
                localPort: UInt16(proxy))
        }
        let busy = Self.busyLines(3_000, avoiding: [])
        // Lines of about 100 bytes: 3,000 of them cross the 64 KiB a read takes, wherever the match falls.
        for position in [0, 1, 2_999] + Array(630...670) {
            var lines = busy.split(separator: "\n", omittingEmptySubsequences: true).map { $0 + "\n" }
            lines.insert(Substring(Self.line(position, local: 0xD431, remote: 0x1F90, uid: 4242)), at: position)
            try (Self.header + lines.joined()).write(toFile: path, atomically: true, encoding: .utf8)
            #expect(table.owner(of: ends(0xD431, 0x1F90)) == .success(4242), "at line \(position)")
        }
        // The last line, with no newline after it; the proxy's own socket (the ends the other way round) and a
        // neighbouring port are not the peer's.
        let last = Self.line(3_000, local: 0xD431, remote: 0x1F90, uid: 65534).dropLast()
        let own = Self.line(3_001, local: 0x1F90, remote: 0xD432, uid: 7)
        try (Self.header + own + busy + last).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(table.owner(of: ends(0xD431, 0x1F90)) == .success(65534))
        #expect(table.owner(of: ends(0xD432, 0x1F90)) == .failure(.notLocal))
        #expect(table.owner(of: ends(0xD43, 0x1F90)) == .failure(.notLocal))
        #expect(
            ProcNetTCP(tcp: path + "-missing", tcp6: path).owner(of: ends(1, 2))
                == .failure(.other("cannot read \(path)-missing: No such file or directory")))
    }

    @Test("slot numbers past 9999 and IPv6 lines are read as the kernel prints them")
    func kernelLineFormats() {
        let table =
            Self.header + """
                10000: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  4242        0 1 1 0
                """
        let v4 = SocketEnds(
            family: .inet, peerAddress: [127, 0, 0, 1], peerPort: 0xD431, localAddress: [127, 0, 0, 1],
            localPort: 0x1F90)
        #expect(ProcNetTCP.owner(of: v4, table: table) == 4242)
        let loopback6 = [UInt8](repeating: 0, count: 15) + [1]
        let v6 = SocketEnds(
            family: .inet6, peerAddress: loopback6, peerPort: 0xD431, localAddress: loopback6, localPort: 0x1F90)
        let end6 = String(ProcNetTCP.endText(loopback6, 0))
        #expect(end6 == "00000000000000000000000001000000:0000")
        let table6 =
            Self.header + """
                   0: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:D431 01 \
                00000000:00000000 00:00000000 00000000  1001        0 5 1 0
                   1: 00000000000000000000000001000000:D431 00000000000000000000000001000000:1F90 01 \
                00000000:00000000 00:00000000 00000000  4243        0 6 1 0

                """
        #expect(ProcNetTCP.owner(of: v6, table: table6) == 4243)
    }

    @Test(
        "a lookup held on a gate, in a 20,000-socket table, does not stop a keep-alive client on the same loop"
    )
    func heldLookupLeavesTheLoopFree() async throws {
        let base = try UnixSocketListenerTests.directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        // The table is a FIFO: the lookup's open(2) waits until the test opens it to write, and its read(2) until
        // the test writes — a gate the test holds (fifo(7)).
        let gate = base + "/tcp"
        try #require(mkfifo(gate, 0o600) == 0, "mkfifo: errno \(errno)")
        let socket = try UnixSocketPath(base + "/proxy.sock")
        // The test's own blocking side of the FIFO runs here, never on the test's executor.
        let writerThread = NIOThreadPool(numberOfThreads: 1)
        writerThread.start()
        try await withUpstream({ _ in .echo }) { upstream in
            // Only the TCP newcomer waits on the gate: the keep-alive client's peer is named without a table.
            try await Self.withOneLoopProxy(upstream: upstream, socket: socket, table: gate) { proxy in
                try await Self.exercise(proxy, socket: socket.path, gate: gate, writer: writerThread)
            }
            // The keep-alive client's second request reached the upstream before the newcomer's, held until its
            // lookup ended.
            #expect(upstream.requests.map(\.head.uri) == ["/first", "/while-held", "/newcomer"])
        }
        try await writerThread.shutdownGracefully()
    }

    /// A proxy on one event loop for everyone, whose peer lookups read `table` for both address families: the
    /// keep-alive client comes through the socket file, whose peer the kernel names without a table (SO_PEERCRED),
    /// and every new TCP connection shares its loop. Shut down whatever `body` does.
    static func withOneLoopProxy(
        upstream: FakeUpstream, socket: UnixSocketPath, table: String, timeouts: ProxyTimeouts = ProxyTimeouts(),
        _ body: (RunningProxy) async throws -> Void
    ) async throws {
        let configuration = try TestConfigurations.make(
            routes: #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#)
        let proxy = try await RunningProxy.start(
            configuration: configuration,
            listeners: [.tcp(ListenAddress(host: "127.0.0.1", port: 0)), .unix(socket)], stateDirectory: nil,
            timeouts: timeouts, threads: 1, logger: ProxyHarness.silentLogger,
            peerLookup: .procTables(tcp: table, tcp6: table))
        do {
            try await body(proxy)
            try await proxy.shutdownWithinLimit()
        } catch {
            try? await proxy.shutdownWithinLimit()
            throw error
        }
    }

    private static func exercise(
        _ proxy: RunningProxy, socket: String, gate: String, writer: NIOThreadPool
    ) async throws {
        let keepAlive = try await TestConnection.open(unixSocket: socket)
        defer { keepAlive.channel.close(promise: nil) }
        #expect(try await keepAlive.send(uri: "/api/first").status == .ok)
        let newcomer = try await TestConnection.open(port: proxy.server.port)
        defer { newcomer.channel.close(promise: nil) }
        let newcomerPort = try #require(newcomer.localPort)
        // Sent at once; the proxy reads none of it until the newcomer is admitted.
        async let newcomerAnswer = newcomer.send(uri: "/api/newcomer", timeout: TestLimits.wait)
        // open(2) for writing returns once the lookup has opened the table to read: the lookup is under way, and
        // now waits in read(2) for the table.
        let descriptor = try await withTimeout(waitingFor: "the lookup to open the table") {
            try await writer.runIfActive { open(gate, O_WRONLY | O_CLOEXEC) }
        }
        try #require(descriptor >= 0, "open \(gate): errno \(errno)")
        // The loop must answer the keep-alive client meanwhile. (Bounded only so that a loop held by the lookup
        // fails this test instead of hanging the suite; the gate is released either way.)
        let whileHeld: Result<TestResponse, any Error>
        do {
            whileHeld = .success(
                try await withTimeout(waitingFor: "the keep-alive client's answer while a lookup is held") {
                    try await keepAlive.send(uri: "/api/while-held")
                })
        } catch {
            whileHeld = .failure(error)
        }
        // Release the lookup: 20,000 other sockets, then the newcomer's, owned by this user.
        let table =
            Self.header + Self.busyLines(20_000, avoiding: [newcomerPort, proxy.server.port])
            + Self.line(20_000, local: newcomerPort, remote: proxy.server.port, uid: UInt32(geteuid()))
        let written = try await writer.runIfActive {
            defer { close(descriptor) }
            return Self.writeAll(table, to: descriptor)
        }
        #expect(written, "the table could not be written to the gate")
        #expect(
            (try? whileHeld.get().status) == .ok,
            "the keep-alive client was not answered while another connection's lookup was held: \(whileHeld)")
        #expect(try await newcomerAnswer.status == .ok, "the newcomer, found in the table, was not served")
    }

    private static func writeAll(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            bytes = bytes.dropFirst(count)
        }
        return true
    }
}
