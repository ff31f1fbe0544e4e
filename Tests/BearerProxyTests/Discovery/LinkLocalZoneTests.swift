import NIOCore
import Testing

@testable import BearerConfiguration
@testable import BearerSignIn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// IPv6 link-local addresses and their zones (RFC 4007 §11, RFC 6874) under the SSRF rule (#25), without sockets: a
/// zone moves no address out of fe80::/10, so a zoned one is link-local, refused unless the route allows it; where
/// it is allowed the zone is kept all the way to the address the connection resolves; a link-local address with no
/// zone, and a URL that writes a zone, are refused with a reason instead of failing at the connect.
@Suite struct LinkLocalZoneTests {
    static let linkLocal: [UInt16] = [0xFE80, 0, 0, 0, 0, 0, 0, 1]
    static let allowing = DiscoverySettings(allowPrivateAddresses: true)

    static func policy(_ answer: [IPAddress], settings: DiscoverySettings = DiscoverySettings()) -> AddressPolicy {
        AddressPolicy(upstream: PinnedURLTests.remote, settings: settings, resolver: RebindingResolver(always: answer))
    }

    @Test("a resolved link-local address with a zone is link-local, refused for a remote upstream")
    func zonedIsLinkLocal() async {
        let zoned = IPAddress.v6(Self.linkLocal, zone: "eth0")
        #expect(zoned.reach == .linkLocal && zoned.description == "fe80:0:0:0:0:0:0:1%eth0")
        await #expect(
            throws: DiscoveryError.privateAddress(
                role: "token endpoint", url: "https://as.example.com/token", address: "fe80:0:0:0:0:0:0:1%eth0",
                reach: "link-local")
        ) {
            try await Self.policy([PinnedURLTests.global, zoned]).pin(
                "https://as.example.com/token", role: "token endpoint")
        }
    }

    @Test("where the route allows it, the zone is pinned and the connection's address keeps it as a scope id")
    func zoneKeptWhereAllowed() async throws {
        let zoned = IPAddress.v6(Self.linkLocal, zone: "lo")
        let pinned = try await Self.policy([zoned], settings: Self.allowing).pin(
            "https://as.example.com:8443/token", role: "token endpoint")
        #expect(pinned.addresses == [zoned])
        // What AsyncHTTPClient is told to connect to instead of the name (its `dnsOverride`), resolved as NIO's
        // bootstrap resolves it (getaddrinfo; a numeric host, asked of no server).
        #expect(try PinnedHTTPClient.overrideKey(for: pinned) == "as.example.com")
        let address = try SocketAddress.makeAddressResolvingHost(zoned.description, port: pinned.port)
        guard case .v6(let resolved) = address else {
            Issue.record("\(address) is not IPv6")
            return
        }
        #expect(resolved.address.sin6_scope_id == if_nametoindex("lo"))
        #expect(address.port == 8443)
    }

    @Test(
        "a link-local address with no zone is refused with the reason, where the route allows it",
        arguments: [
            ("https://as.example.com/token", [IPAddress.v6(LinkLocalZoneTests.linkLocal)], "fe80:0:0:0:0:0:0:1"),
            ("https://[fe80::1]/token", [], "fe80:0:0:0:0:0:0:1"),
        ])
    func noZone(_ url: String, _ answer: [IPAddress], _ address: String) async {
        await #expect(throws: DiscoveryError.linkLocalWithoutZone(role: "token endpoint", url: url, address: address)) {
            try await Self.policy(answer, settings: Self.allowing).pin(url, role: "token endpoint")
        }
        // And where it does not, it is link-local like any other.
        await #expect(
            throws: DiscoveryError.privateAddress(
                role: "token endpoint", url: url, address: address, reach: "link-local")
        ) {
            try await Self.policy(answer).pin(url, role: "token endpoint")
        }
    }

    @Test("an address that embeds IPv4 link-local (NAT64) needs no zone")
    func nat64NeedsNoZone() async throws {
        let nat64 = IPAddress.v6([0x64, 0xFF9B, 0, 0, 0, 0, 0xA9FE, 0xA9FE])
        #expect(nat64.reach == .linkLocal && !nat64.isLinkLocalWithoutZone)
        let pinned = try await Self.policy([nat64], settings: Self.allowing).pin(
            "https://as.example.com/token", role: "token endpoint")
        #expect(pinned.addresses == [nat64])
    }

    @Test(
        "a URL that writes a zone (RFC 6874) is refused whatever the route allows",
        arguments: ["https://[fe80::1%25eth0]/token", "https://[fe80::1%eth0]:8443/token", "http://[fe80::1%251]/"])
    func zoneInAURL(_ url: String) async {
        for settings in [DiscoverySettings(), Self.allowing] {
            do {
                let pinned = try await Self.policy([], settings: settings).pin(url, role: "token endpoint")
                Issue.record("\(url) pinned to \(pinned.addresses)")
            } catch {
                guard case .zonedAddress(_, let found, let address) = error else {
                    Issue.record("\(url): \(error)")
                    continue
                }
                #expect(found == url && address.hasPrefix("fe80::1%") && !address.contains("%25"))
                #expect(error.explanation.contains("zone"))
            }
        }
    }

    @Test("the system resolver keeps a link-local answer's zone, by its interface's name")
    func resolverKeepsTheZone() async throws {
        #expect(SystemHostResolver.zone(0) == nil)
        #expect(SystemHostResolver.zone(if_nametoindex("lo")) == "lo")
        // A numeric host: getaddrinfo answers it without asking any server.
        let answer = try await SystemHostResolver().addresses(of: "fe80::1%lo")
        #expect(answer == [.v6(Self.linkLocal, zone: "lo")])
        #expect(try await SystemHostResolver().addresses(of: "fe80::1") == [.v6(Self.linkLocal)])
    }
}
