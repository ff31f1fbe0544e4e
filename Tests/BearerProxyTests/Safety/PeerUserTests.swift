import Foundation
import Logging
import NIOCore
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

/// #26 item 1: on loopback, a connection whose peer socket belongs to another user of the machine is closed before
/// anything of it is read, unless `allowUsers` names that user; a lookup that fails refuses. The cross-user attack
/// itself, with a client really running as another uid, is `.ci/cross-user` (it needs root to start one).
@Suite("Only its owner: connections from other local users are closed")
struct PeerUserTests {
    /// A loopback connection made here: the accepting side's view of it (peer, local), and the descriptors to close.
    /// A listener on `::` reached at an IPv4 address sees the peer as IPv4-mapped (`::ffff:127.0.0.1`).
    static func loopbackConnection(
        host: String = "127.0.0.1", connectTo target: String? = nil
    ) throws -> (remote: SocketAddress, local: SocketAddress, close: () -> Void) {
        let target = target ?? host
        let listener = socket(host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        let bound = try SocketAddress(ipAddress: host, port: 0).withSockAddr { bind(listener, $0, socklen_t($1)) }
        try #require(bound == 0 && listen(listener, 4) == 0)
        let port = try Self.port(of: listener, peer: false)
        let client = socket(target.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = try SocketAddress(ipAddress: target, port: port).withSockAddr {
            connect(client, $0, socklen_t($1))
        }
        try #require(connected == 0)
        let accepted = accept(listener, nil, nil)
        try #require(accepted >= 0)
        // The accepting socket's family decides how it sees both ends.
        let seen = host.contains(":") && !target.contains(":") ? "::ffff:" + target : target
        let remote = try SocketAddress(ipAddress: seen, port: Self.port(of: accepted, peer: true))
        let local = try SocketAddress(ipAddress: seen, port: Self.port(of: accepted, peer: false))
        return (
            remote, local,
            {
                _ = Glibc.close(accepted); _ = Glibc.close(client); _ = Glibc.close(listener)
            }
        )
    }

    private static func port(of fd: Int32, peer: Bool) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        try #require(status == 0)
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin6_port))
            }
        }
    }

    @Test(
        "the kernel names this process's user as the owner of its own loopback connection, by netlink and /proc",
        arguments: ["127.0.0.1", "::1"])
    func kernelNamesTheOwner(host: String) throws {
        let connection: (remote: SocketAddress, local: SocketAddress, close: () -> Void)
        do {
            connection = try Self.loopbackConnection(host: host)
        } catch {
            // A machine without IPv6 on loopback has nothing to look up there.
            try #require(host == "::1", "\(error)")
            return
        }
        defer { connection.close() }
        let ends = try #require(PeerUserPolicy.ends(remote: connection.remote, local: connection.local))
        #expect(ends.isLoopback)
        let me = UInt32(geteuid())
        #expect(SocketDiagnostics.owner(of: ends) == .success(me))
        #expect(ProcNetTCP.kernel.owner(of: ends) == .success(me))
        #expect(PeerUserPolicy().decide(remote: connection.remote, local: connection.local) == .admitted(uid: me))
        // The same connection, as if the proxy ran as someone else: refused, naming this user.
        #expect(
            PeerUserPolicy(owner: me &+ 1).decide(remote: connection.remote, local: connection.local)
                == .refused(uid: me))
        #expect(
            PeerUserPolicy(owner: me &+ 1, allowUsers: [me]).decide(remote: connection.remote, local: connection.local)
                == .admitted(uid: me))
    }

    @Test("a dual-stack listener sees an IPv4 peer as ::ffff:127.0.0.1: the kernel still names its owner")
    func mappedPeer() throws {
        let connection: (remote: SocketAddress, local: SocketAddress, close: () -> Void)
        do {
            connection = try Self.loopbackConnection(host: "::", connectTo: "127.0.0.1")
        } catch {
            return  // no IPv6 on this machine: nothing is IPv4-mapped
        }
        defer { connection.close() }
        let ends = try #require(PeerUserPolicy.ends(remote: connection.remote, local: connection.local))
        #expect(ends.family == .inet6 && ends.isLoopback)
        let me = UInt32(geteuid())
        #expect(SocketDiagnostics.owner(of: ends) == .success(me))
        #expect(
            PeerUserPolicy(owner: me &+ 1).decide(remote: connection.remote, local: connection.local)
                == .refused(uid: me))
    }

    /// An IPv4 address of this machine that is not loopback (eth0's), if it has one.
    static func nonLoopbackAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET else { continue }
            let ip = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            let bytes = withUnsafeBytes(of: ip) { Array($0) }
            if bytes[0] != 127 { return bytes.map(String.init).joined(separator: ".") }
        }
        return nil
    }

    @Test("a local user who connects to one of the machine's other addresses is looked up too (listener on 0.0.0.0)")
    func otherLocalAddress() throws {
        guard let address = Self.nonLoopbackAddress() else { return }  // only loopback here: nothing to reach
        let connection = try Self.loopbackConnection(host: "0.0.0.0", connectTo: address)
        defer { connection.close() }
        let ends = try #require(PeerUserPolicy.ends(remote: connection.remote, local: connection.local))
        #expect(!ends.isLoopback)
        let me = UInt32(geteuid())
        #expect(SocketDiagnostics.owner(of: ends) == .success(me))
        #expect(
            PeerUserPolicy(owner: me &+ 1).decide(remote: connection.remote, local: connection.local)
                == .refused(uid: me))
    }

    @Test("a peer the kernel holds no socket for is another machine's: admitted, the client key guards it")
    func remotePeer() {
        // 192.0.2.0/24 (TEST-NET-1, RFC 5737) to this machine: no such connection exists, so no local socket.
        let ends = SocketEnds(
            family: .inet, peerAddress: [192, 0, 2, 77], peerPort: 40_000, localAddress: [192, 0, 2, 2],
            localPort: 8080)
        #expect(SocketDiagnostics.owner(of: ends) == .failure(.notLocal))
        let loopback = SocketEnds(
            family: .inet, peerAddress: [127, 0, 0, 1], peerPort: 40_000, localAddress: [127, 0, 0, 1],
            localPort: 1)
        #expect(SocketDiagnostics.owner(of: loopback) == .failure(.notLocal))
    }

    @Test("the log says so once a minute per user, with how many were refused; the rest are only counted")
    func logThrottle() {
        let throttle = LogThrottle(interval: .seconds(60))
        let start = ContinuousClock.now
        #expect(throttle.due("uid 7", now: start) == 1)
        #expect(throttle.due("uid 7", now: start + .seconds(1)) == nil)
        #expect(throttle.due("uid 7", now: start + .seconds(59)) == nil)
        #expect(throttle.due("uid 8", now: start + .seconds(59)) == 1)
        #expect(throttle.due("uid 7", now: start + .seconds(61)) == 3)
    }

    @Test("/proc/net/tcp lines are matched on the peer's end and the proxy's; the uid column is read")
    func procTable() throws {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 1 1
               1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  4242        0 2 1
               2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1001        0 3 1
            """
        let ends = SocketEnds(
            family: .inet, peerAddress: [127, 0, 0, 1], peerPort: 0xD431, localAddress: [127, 0, 0, 1],
            localPort: 0x1F90)
        #expect(ProcNetTCP.owner(of: ends, table: table) == 4242)
        let other = SocketEnds(
            family: .inet, peerAddress: [127, 0, 0, 1], peerPort: 0xD432, localAddress: [127, 0, 0, 1],
            localPort: 0x1F90)
        #expect(ProcNetTCP.owner(of: other, table: table) == nil)
    }

    @Test("loopback is 127/8, ::1 and IPv4-mapped 127/8; nothing else is looked up")
    func loopbackAddresses() {
        func ends(_ family: SocketEnds.Family, _ address: [UInt8]) -> SocketEnds {
            SocketEnds(family: family, peerAddress: address, peerPort: 1, localAddress: address, localPort: 2)
        }
        #expect(ends(.inet, [127, 1, 2, 3]).isLoopback)
        #expect(!ends(.inet, [10, 0, 0, 1]).isLoopback)
        #expect(ends(.inet6, [UInt8](repeating: 0, count: 15) + [1]).isLoopback)
        #expect(ends(.inet6, [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 1]).isLoopback)
        #expect(!ends(.inet6, [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 0, 0, 1]).isLoopback)
        #expect(!ends(.inet6, [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]).isLoopback)
    }

    /// A proxy whose every loopback peer "belongs to" `lookup`'s answer, with the route `/api` to `upstream`.
    static func withProxy(
        lookup: PeerUserPolicy.Lookup, allowUsers: String = "", upstream: FakeUpstream,
        logger: Logger = ProxyHarness.silentLogger, _ body: (RunningProxy) async throws -> Void
    ) async throws {
        try await ProxyHarness.with(
            routes: #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#,
            extra: allowUsers.isEmpty ? "" : #""allowUsers": \#(allowUsers)"#, logger: logger, peerLookup: lookup
        ) { try await body($0.proxy) }
    }

    @Test("another user's connection is closed with nothing read: no answer, no token, no upstream request")
    func otherUserRefused() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let logs = CapturingLogHandler.Store()
            let stranger = UInt32(geteuid()) &+ 1
            try await Self.withProxy(
                lookup: .fixed(stranger), upstream: upstream, logger: CapturingLogHandler.logger(into: logs)
            ) { proxy in
                let port = proxy.server.port
                for uri in ["/api/x", "/-/health", "/-/status"] {
                    await #expect(throws: (any Error).self, "\(uri) was answered") {
                        try await TestClient.send(port: port, uri: uri)
                    }
                }
                #expect(upstream.requests.isEmpty)
                #expect(proxy.tokens.allTokens.isEmpty, "a token was fetched for another user")
                // Three refusals, one line: a stranger looping on connect cannot fill the owner's disk.
                #expect(logs.all.filter { $0.contains("closed a connection from uid \(stranger)") }.count == 1)
            }
        }
    }

    @Test("allowUsers lets the listed user in")
    func listedUserAdmitted() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let stranger = UInt32(geteuid()) &+ 1
            try await Self.withProxy(lookup: .fixed(stranger), allowUsers: "[\(stranger)]", upstream: upstream) {
                proxy in
                let response = try await TestClient.send(port: proxy.server.port, uri: "/api/x")
                #expect(response.status == .ok)
            }
        }
    }

    @Test("a lookup that fails refuses the connection and says why")
    func failedLookupFailsClosed() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            let logs = CapturingLogHandler.Store()
            try await Self.withProxy(
                lookup: .failing, upstream: upstream, logger: CapturingLogHandler.logger(into: logs)
            ) { proxy in
                await #expect(throws: (any Error).self) {
                    try await TestClient.send(port: proxy.server.port, uri: "/api/x")
                }
                #expect(upstream.requests.isEmpty)
                #expect(logs.all.contains { $0.contains("cannot tell which user it comes from") })
            }
        }
    }

    @Test("allowUsers takes names and uids; an unknown name or a bad uid is reported at its path")
    func configuration() throws {
        typealias F = ConfigurationFixture
        let configuration = try F.parse(F.document(#""allowUsers": ["root", 4242, "root"]"#))
        #expect(configuration.allowUsers == [0, 4242])
        let problems = F.problems(F.document(#""allowUsers": ["no-such-user-here", -1, 2.5, ""]"#))
        #expect(problems.map(\.path) == ["allowUsers[0]", "allowUsers[1]", "allowUsers[2]", "allowUsers[3]"])
        #expect(problems.first?.message.contains("no user \"no-such-user-here\"") == true)
    }

    @Test(
        "/-/status says who may use the proxy: the listener, the peer user check, allowUsers, key, headers (#26 item 4)"
    )
    func statusShowsTheChecks() async throws {
        try await withUpstream({ _ in .echo }) { upstream in
            try await ProxyHarness.with(
                routes: #"[{ "prefix": "/api", "upstream": "\#(upstream.baseURL)", "scopes": ["api://a/R"] }]"#,
                extra: #""allowUsers": [4242], "requireHeader": { "name": "X-Requested-By", "value": "not-shown" }"#
            ) { harness in
                let proxy = harness.proxy
                let port = proxy.server.port
                let response = try await TestClient.send(port: port, uri: "/-/status")
                #expect(!response.bodyText.contains("not-shown"), "the required header's value was shown")
                let access = try #require(try response.jsonObject()["access"] as? [String: Any])
                #expect(access["listeners"] as? [String] == ["127.0.0.1:\(port)"])
                #expect(access["peerUserCheck"] as? String == "on")
                #expect(access["allowUsers"] as? [Int] == [4242])
                #expect(access["clientKeyRequired"] as? Bool == false)
                #expect(access["requireHeader"] as? String == "X-Requested-By")
                let routes = try #require(try response.jsonObject()["routes"] as? [[String: Any]])
                #expect(routes.first?["requiredHeaders"] as? [String] == ["X-Requested-By"])
            }
        }
    }
}
