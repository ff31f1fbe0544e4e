import AsyncHTTPClient
import NIOCore
import Testing

@testable import BearerConfiguration
@testable import BearerHTTP
@testable import BearerSignIn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a request of discovery or of a discovered sign-in connects to (#25): the addresses a name resolved to once,
/// each judged — without sockets. The attacker's answers: IPv6 loopback, IPv4 inside IPv6 (mapped, NAT64, 6to4), the
/// machine's own unique-local address, link-local, one private address among global ones, no address at all.
@Suite struct PinnedURLTests {
    static let remote = Upstream(parsing: "https://mcp.example.com/mcp")!
    static let global = IPAddress.v4([93, 184, 216, 34])

    static func policy(
        _ answer: [IPAddress], settings: DiscoverySettings = DiscoverySettings()
    ) -> (AddressPolicy, RebindingResolver) {
        let resolver = RebindingResolver(always: answer)
        return (AddressPolicy(upstream: remote, settings: settings, resolver: resolver), resolver)
    }

    @Test(
        "a name is refused when any address it resolves to is not global",
        arguments: [
            ("IPv6 loopback", [IPAddress.v6([0, 0, 0, 0, 0, 0, 0, 1])], "loopback"),
            ("IPv4-mapped 127.0.0.1", [.v6([0, 0, 0, 0, 0, 0xFFFF, 0x7F00, 1])], "loopback"),
            ("IPv4-compatible 10.0.0.1", [.v6([0, 0, 0, 0, 0, 0, 0x0A00, 1])], "private"),
            ("NAT64 of 169.254.169.254", [.v6([0x64, 0xFF9B, 0, 0, 0, 0, 0xA9FE, 0xA9FE])], "link-local"),
            ("6to4 of 192.168.0.1", [.v6([0x2002, 0xC0A8, 0x0001, 0, 0, 0, 0, 1])], "private"),
            ("unique local (this machine's fd00::2)", [.v6([0xFD00, 0, 0, 0, 0, 0, 0, 2])], "private"),
            ("IPv6 link-local", [.v6([0xFE80, 0, 0, 0, 0, 0, 0, 1])], "link-local"),
            ("documentation, as numbered here (this machine's 192.0.2.2)", [.v4([192, 0, 2, 2])], "private"),
            ("documentation 203.0.113.0/24", [.v4([203, 0, 113, 9])], "private"),
            ("documentation IPv6", [.v6([0x2001, 0xDB8, 0, 0, 0, 0, 0, 1])], "private"),
            ("one private A record among global ones", [global, .v4([10, 0, 0, 7]), global], "private"),
            (
                "a global AAAA and a loopback A",
                [.v6([0x2606, 0x2800, 0x220, 1, 0x248, 0x1893, 0x25C8, 0x1946]), .v4([127, 0, 0, 1])], "loopback"
            ),
        ])
    func refused(_ name: String, _ answer: [IPAddress], _ reach: String) async {
        let (policy, resolver) = Self.policy(answer)
        do {
            let pinned = try await policy.pin("https://as.example.com/token", role: "token endpoint")
            Issue.record("\(name): pinned to \(pinned.addresses)")
        } catch {
            guard case .privateAddress(_, _, _, let found) = error else {
                Issue.record("\(name): \(error)")
                return
            }
            #expect(found == reach, "\(name)")
        }
        #expect(resolver.questions(about: "as.example.com") == 1)
    }

    @Test("a name that resolves to nothing is not found")
    func nothing() async {
        let (policy, _) = Self.policy([])
        await #expect(throws: DiscoveryError.hostNotFound(host: "as.example.com")) {
            try await policy.pin("https://as.example.com/token", role: "token endpoint")
        }
    }

    @Test("the addresses pinned are the resolver's answer, in its order, asked once")
    func pinnedAsAnswered() async throws {
        let answer: [IPAddress] = [.v6([0x2606, 0x2800, 0x220, 1, 0, 0, 0, 1]), Self.global]
        let (policy, resolver) = Self.policy(answer)
        let pinned = try await policy.pin("https://as.example.com:8443/token?x=1", role: "token endpoint")
        #expect(pinned.addresses == answer)
        #expect(pinned.port == 8443 && pinned.text == "https://as.example.com:8443/token?x=1")
        #expect(resolver.questions(about: "as.example.com") == 1)
    }

    @Test("a literal address is judged as it is, asking no resolver")
    func literal() async throws {
        let (policy, resolver) = Self.policy([.v4([127, 0, 0, 1])])
        let pinned = try await policy.pin("https://[2606:2800:220:1::1]/token", role: "token endpoint")
        #expect(pinned.addresses == [.v6([0x2606, 0x2800, 0x220, 1, 0, 0, 0, 1])])
        await #expect(throws: DiscoveryError.self) {
            try await policy.pin("https://[::ffff:169.254.169.254]/token", role: "token endpoint")
        }
        #expect(resolver.questions(about: "[::ffff:169.254.169.254]") == 0)
        #expect(try await policy.pin("https://93.184.216.34/t", role: "token endpoint").addresses == [Self.global])
    }

    @Test("localhost names are refused without asking the resolver")
    func localhost() async {
        let (policy, resolver) = Self.policy([Self.global])
        for host in ["localhost", "a.localhost"] {
            await #expect(throws: DiscoveryError.self) {
                try await policy.pin("https://\(host)/token", role: "token endpoint")
            }
            #expect(resolver.questions(about: host) == 0)
        }
    }

    @Test(
        "allowPrivateAddresses: internal addresses are pinned too — still resolved once, still connected to as resolved"
    )
    func internalAllowed() async throws {
        var settings = DiscoverySettings()
        settings.allowPrivateAddresses = true
        let (policy, resolver) = Self.policy([.v4([10, 0, 0, 7])], settings: settings)
        let pinned = try await policy.pin("https://as.example.com/token", role: "token endpoint")
        #expect(pinned.addresses == [.v4([10, 0, 0, 7])])
        #expect(resolver.questions(about: "as.example.com") == 1)
    }

    @Test("the upstream's own probe is resolved once, not judged; a name that does not resolve is unreachable")
    func upstream() async throws {
        let resolver = RebindingResolver(first: [.v4([10, 0, 0, 1])], then: [.v4([127, 0, 0, 1])])
        let pinned = try await PinnedURL(upstream: Self.remote, resolver: resolver)
        #expect(pinned.addresses == [.v4([10, 0, 0, 1])] && pinned.text == "https://mcp.example.com/mcp")
        await #expect(
            throws: DiscoveryError.upstreamUnreachable(
                upstream: "https://mcp.example.com/mcp", reason: "the host name does not resolve")
        ) {
            try await PinnedURL(upstream: Self.remote, resolver: TableResolver())
        }
    }

    @Test("AsyncHTTPClient's override names the host it reads from the URL; a literal needs none")
    func overrideKey() async throws {
        let (policy, _) = Self.policy([Self.global])
        let mixed = try await policy.pin("https://AS.Example.com/token", role: "token endpoint")
        #expect(try PinnedHTTPClient.overrideKey(for: mixed)?.lowercased() == "as.example.com")
        let literal = try await policy.pin("https://93.184.216.34:8443/token", role: "token endpoint")
        #expect(try PinnedHTTPClient.overrideKey(for: literal) == nil)
    }

    @Test(
        "another address is tried only after a failure to connect, when nothing was sent",
        arguments: [
            (IOError(errnoCode: ECONNREFUSED, reason: "connect") as any Error, true),
            (IOError(errnoCode: EHOSTUNREACH, reason: "connect"), true),
            (IOError(errnoCode: ENETUNREACH, reason: "connect"), true),
            (HTTPClientError.connectTimeout, true),
            (IOError(errnoCode: ECONNRESET, reason: "read"), false),
            (HTTPClientError.readTimeout, false),
            (HTTPClientError.deadlineExceeded, false),
            (HTTPClientError.remoteConnectionClosed, false),
        ])
    func neverConnected(_ error: any Error, _ expected: Bool) {
        #expect(PinnedHTTPClient.neverConnected(error) == expected)
    }
}
