import Foundation
import NIOCore
import Testing

@testable import BearerConfiguration
@testable import BearerDataPlane
@testable import BearerRuntime

/// The owner-only rule checked from seats the suite's own account cannot reach by connecting: the request the
/// proxy sends the kernel, byte by byte (every connection the suite makes has both ends owned by one user, so a
/// request that asked about the proxy's own socket would look right); the rule as a function of fixed uids (so
/// "root is refused" does not depend on who runs the suite); a loopback peer the kernel holds no socket for; and,
/// where the account may give a socket to another user (root), a peer that really is another user.
@Suite("Only its owner: the kernel request, the rule and the peers the suite's account is not")
struct PeerUserRuleTests {
    /// One field of `inet_diag_req_v2` behind its `nlmsghdr`: where it is and what it must hold.
    struct Field: CustomStringConvertible {
        let name: String
        let range: Range<Int>
        let bytes: [UInt8]
        var description: String { name }
    }

    static func native<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    /// The request for `ends`, field by field as `<linux/netlink.h>` and `<linux/inet_diag.h>` lay it out: the
    /// socket id names the peer's socket, whose source is the peer and whose destination is the proxy.
    static func expectedFields(_ ends: SocketEnds, family: UInt8) -> [Field] {
        func padded(_ address: [UInt8]) -> [UInt8] { address + [UInt8](repeating: 0, count: 16 - address.count) }
        func bigEndian(_ port: UInt16) -> [UInt8] { [UInt8(port >> 8), UInt8(port & 0xFF)] }
        return [
            Field(name: "nlmsg_len", range: 0..<4, bytes: native(UInt32(72))),
            Field(name: "nlmsg_type (SOCK_DIAG_BY_FAMILY)", range: 4..<6, bytes: native(UInt16(20))),
            Field(name: "nlmsg_flags (NLM_F_REQUEST)", range: 6..<8, bytes: native(UInt16(1))),
            Field(name: "nlmsg_seq", range: 8..<12, bytes: native(UInt32(1))),
            Field(name: "nlmsg_pid", range: 12..<16, bytes: native(UInt32(0))),
            Field(name: "sdiag_family", range: 16..<17, bytes: [family]),
            Field(name: "sdiag_protocol (IPPROTO_TCP)", range: 17..<18, bytes: [6]),
            Field(name: "idiag_ext, pad", range: 18..<20, bytes: [0, 0]),
            Field(name: "idiag_states (all)", range: 20..<24, bytes: [0xFF, 0xFF, 0xFF, 0xFF]),
            Field(name: "id.idiag_sport (the peer's port)", range: 24..<26, bytes: bigEndian(ends.peerPort)),
            Field(name: "id.idiag_dport (the proxy's port)", range: 26..<28, bytes: bigEndian(ends.localPort)),
            Field(name: "id.idiag_src (the peer's address)", range: 28..<44, bytes: padded(ends.peerAddress)),
            Field(name: "id.idiag_dst (the proxy's address)", range: 44..<60, bytes: padded(ends.localAddress)),
            Field(name: "id.idiag_if", range: 60..<64, bytes: [0, 0, 0, 0]),
            Field(
                name: "id.idiag_cookie (INET_DIAG_NOCOOKIE)", range: 64..<72, bytes: [UInt8](repeating: 0xFF, count: 8)),
        ]
    }

    @Test("the sock_diag request asks for the peer's socket: source the peer, destination the proxy, field by field")
    func socketDiagnosticsRequest() {
        // Every field of one end differs from the other's, so a request about the wrong socket cannot look right.
        let v4 = SocketEnds(
            family: .inet, peerAddress: [127, 0, 0, 2], peerPort: 0xD431, localAddress: [127, 0, 0, 1],
            localPort: 0x1F90)
        let v6 = SocketEnds(
            family: .inet6, peerAddress: [UInt8](repeating: 0, count: 15) + [1], peerPort: 0xD431,
            localAddress: [0xFD] + [UInt8](repeating: 0, count: 14) + [7], localPort: 0x1F90)
        for (ends, family) in [(v4, UInt8(AF_INET)), (v6, UInt8(AF_INET6))] {
            let request = SocketDiagnostics.request(for: ends)
            #expect(request.count == 72, "nlmsghdr (16) + inet_diag_req_v2 (56)")
            for field in Self.expectedFields(ends, family: family) where request.count >= field.range.upperBound {
                #expect(Array(request[field.range]) == field.bytes, "\(ends.family): \(field)")
            }
        }
    }

    @Test(
        "the rule from fixed uids: owner 4242 admits 4242 and refuses root and nobody, whoever runs the suite",
        arguments: [
            (peer: UInt32(0), allowUsers: [UInt32](), admitted: false),
            (peer: 4242, allowUsers: [], admitted: true),
            (peer: 65534, allowUsers: [], admitted: false),
            (peer: 65534, allowUsers: [65534], admitted: true),
            (peer: 0, allowUsers: [65534], admitted: false),
            (peer: 0, allowUsers: [0], admitted: true),
        ])
    func ruleFromFixedUIDs(peer: UInt32, allowUsers: [UInt32], admitted: Bool) throws {
        let policy = PeerUserPolicy(owner: 4242, allowUsers: allowUsers)
        let expected: PeerUserPolicy.Decision = admitted ? .admitted(uid: peer) : .refused(uid: peer)
        #expect(policy.decide(peer: peer) == expected)
        // Each way a peer's uid reaches the rule comes to the same: a socket file's SO_PEERCRED, a TCP peer looked
        // up (here answered by a fixed lookup), a TCP peer found in the socket table.
        #expect(policy.decide(unixPeer: .success(peer)) == expected)
        let fixed = PeerUserPolicy(owner: 4242, allowUsers: allowUsers, lookup: .fixed(peer))
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 8080)
        #expect(fixed.decide(remote: remote, local: local) == expected)
        let ends = try #require(PeerUserPolicy.ends(remote: remote, local: local))
        #expect(policy.decide(ends, owner: .success(peer)) == expected)
    }

    @Test("a loopback peer the kernel holds no socket for is refused; one on another machine is left to the key")
    func loopbackPeerWithoutSocket() throws {
        let policy = PeerUserPolicy(owner: 4242)
        // 127.0.0.1:1 has no connection from 127.0.0.1:40000: the kernel answers "no such socket".
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
        guard case .unknown = policy.decide(remote: remote, local: local) else {
            Issue.record("a loopback peer with no socket was not refused")
            return
        }
        let loopback = try #require(PeerUserPolicy.ends(remote: remote, local: local))
        #expect(
            policy.decide(loopback, owner: .failure(.notLocal))
                == .unknown(reason: "the kernel holds no socket for this loopback peer"))
        let elsewhere = SocketEnds(
            family: .inet, peerAddress: [192, 0, 2, 77], peerPort: 40_000, localAddress: [192, 0, 2, 2],
            localPort: 8080)
        #expect(policy.decide(elsewhere, owner: .failure(.notLocal)) == .admitted(uid: nil))
        // The /proc fallback finds no line for it either: refused the same way.
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("bp-tcp-\(UUID().uuidString)").path
        let header =
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        try header.write(toFile: empty, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let table = PeerUserPolicy(owner: 4242, lookup: .procTables(tcp: empty, tcp6: empty))
        #expect(
            table.decide(remote: remote, local: local)
                == .unknown(reason: "the kernel holds no socket for this loopback peer"))
    }

    /// Whether this account may give a socket to another user (`fchown`, which needs `CAP_CHOWN`: root).
    static let canGiveSocketsAway: Bool = {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fchown(descriptor, 65534, 65534) == 0
    }()

    /// A TCP socket owned by `uid` (fchown(2) on a socket sets the owner the kernel's socket tables report, as if
    /// `uid`'s process had made it), connected to 127.0.0.1:`port`.
    static func socket(of uid: UInt32, connectedTo port: Int) throws -> Int32 {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        try #require(fchown(descriptor, uid, uid) == 0, "fchown: errno \(errno)")
        let connected = try SocketAddress(ipAddress: "127.0.0.1", port: port).withSockAddr {
            connect(descriptor, $0, socklen_t($1))
        }
        try #require(connected == 0, "connect: errno \(errno)")
        return descriptor
    }

    @Test(
        "a peer that really is another user: the kernel names it, by netlink and /proc, and the proxy closes it",
        .enabled(if: Self.canGiveSocketsAway, "needs root: only root can give a socket to another user"))
    func peerThatIsAnotherUser() async throws {
        // The lookup by itself: a listener of this user's, a client socket of nobody's (65534) and one of 4242's.
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        let bound = try SocketAddress(ipAddress: "127.0.0.1", port: 0).withSockAddr {
            bind(listener, $0, socklen_t($1))
        }
        try #require(bound == 0 && listen(listener, 4) == 0)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        for uid: UInt32 in [65534, 4242] {
            let client = try Self.socket(of: uid, connectedTo: port)
            defer { close(client) }
            let accepted = accept(listener, nil, nil)
            try #require(accepted >= 0)
            defer { close(accepted) }
            let remote = try #require(try Self.address(of: accepted, peer: true))
            let local = try #require(try Self.address(of: accepted, peer: false))
            let ends = try #require(PeerUserPolicy.ends(remote: remote, local: local))
            #expect(SocketDiagnostics.owner(of: ends) == .success(uid), "netlink, uid \(uid)")
            #expect(ProcNetTCP.kernel.owner(of: ends) == .success(uid), "/proc, uid \(uid)")
            let me = UInt32(geteuid())
            #expect(PeerUserPolicy(owner: me).decide(remote: remote, local: local) == .refused(uid: uid))
            #expect(PeerUserPolicy(owner: uid).decide(remote: remote, local: local) == .admitted(uid: uid))
        }
        // Through a running proxy of this user's, with the kernel's lookup: nobody's connection is closed with
        // nothing answered; 4242, listed in allowUsers, and this user are served.
        try await withUpstream({ _ in .echo }) { upstream in
            try await PeerUserTests.withProxy(lookup: .kernel, allowUsers: "[4242]", upstream: upstream) { proxy in
                let port = proxy.server.port
                let stranger = try Self.socket(of: 65534, connectedTo: port)
                await #expect(throws: (any Error).self, "nobody's request was answered") {
                    // The proxy may close it before the client's pipeline is even set up: either fails.
                    let connection = try await TestConnection.open(connectedSocket: stranger, port: port)
                    defer { connection.channel.close(promise: nil) }
                    _ = try await connection.send(uri: "/api/x")
                }
                for uid in [4242, UInt32(geteuid())] {
                    let listed = try await TestConnection.open(
                        connectedSocket: try Self.socket(of: uid, connectedTo: port), port: port)
                    let response = try await listed.send(uri: "/api/x")
                    #expect(response.status == .ok, "uid \(uid)")
                    await listed.close()
                }
                #expect(upstream.requests.count == 2)
            }
        }
    }

    /// The accepted socket's peer (`peer`) or own address.
    static func address(of descriptor: Int32, peer: Bool) throws -> SocketAddress? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard status == 0 else { return nil }
        return SocketAddress(address, host: "127.0.0.1")
    }
}
