import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// An IP address as the SSRF rule sees it: IPv4 octets or IPv6 groups, from a URL's literal host or from the resolver,
/// classified by where it reaches.
package enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    /// `zone`: the interface a link-local address is reached through (RFC 4007 §11: `fe80::1%eth0`), as the
    /// resolver gave it (`/etc/hosts` may name one); judged by its groups alone — a zone moves no address out of
    /// fe80::/10 — and kept for the connection, which cannot reach a link-local address without one.
    case v6([UInt16], zone: String? = nil)

    /// Where an address reaches.
    package enum Reach: String, Sendable {
        /// The internet.
        case global
        /// This machine (127.0.0.0/8, ::1) or "this network" (0.0.0.0/8, ::).
        case loopback
        /// A private or otherwise non-global network: RFC 1918, carrier-grade NAT (RFC 6598), unique local
        /// (RFC 4193), benchmarking, documentation (RFC 5737, RFC 3849), discard-only, multicast, reserved.
        case privateNetwork = "private"
        /// 169.254.0.0/16 (cloud metadata services live there) and fe80::/10.
        case linkLocal = "link-local"
    }

    /// The address a URL's host names literally, in the one spelling `URLParts` accepts (dotted quad without
    /// leading zeros, or an IPv6 literal); nil for a DNS name. Other IPv4 spellings (`2130706433`, `0x7f.1`,
    /// `0177.0.0.1`, `127.1`) are not host names either: `URLParts` refuses them before this is asked.
    init?(literal host: String) {
        if let octets = HostName.ipv4Octets(host[...]) {
            self = .v4(octets)
        } else if let groups = HostName.ipv6Groups(host[...]) {
            self = .v6(groups, zone: nil)
        } else {
            return nil
        }
    }

    var reach: Reach {
        switch self {
        case .v4(let octets): Self.reach(ipv4: octets)
        case .v6(let groups, _): Self.reach(ipv6: groups)
        }
    }

    /// An IPv6 link-local unicast address (fe80::/10, RFC 4291 §2.5.6) with no zone: no connection can be made to
    /// it, since nothing says which interface's link it is on.
    var isLinkLocalWithoutZone: Bool {
        guard case .v6(let groups, zone: nil) = self else { return false }
        return (0xFE80...0xFEBF).contains(groups[0])
    }

    package var description: String {
        switch self {
        case .v4(let octets): octets.map(String.init).joined(separator: ".")
        case .v6(let groups, let zone):
            groups.map { String($0, radix: 16) }.joined(separator: ":") + (zone.map { "%" + $0 } ?? "")
        }
    }

    /// IANA's IPv4 special-purpose registry (RFC 6890), as far as reaching a host goes.
    private static func reach(ipv4 octets: [UInt8]) -> Reach {
        let (a, b) = (octets[0], octets[1])
        switch a {
        case 0, 127: return .loopback
        case 10: return .privateNetwork
        case 100 where (64...127).contains(b): return .privateNetwork  // RFC 6598 shared address space
        case 169 where b == 254: return .linkLocal
        case 172 where (16...31).contains(b): return .privateNetwork
        case 192 where b == 168: return .privateNetwork
        case 192 where b == 0 && octets[2] == 0: return .privateNetwork  // IETF protocol assignments
        // Documentation (RFC 5737), never globally reachable — yet a machine may be numbered from it (a sandbox whose
        // interface is 192.0.2.2), and then such a URL reaches the machine's own services.
        case 192 where b == 0 && octets[2] == 2: return .privateNetwork
        case 198 where b == 51 && octets[2] == 100: return .privateNetwork
        case 203 where b == 0 && octets[2] == 113: return .privateNetwork
        case 198 where b == 18 || b == 19: return .privateNetwork  // benchmarking, RFC 2544
        case 224...255: return .privateNetwork  // multicast, reserved, broadcast
        default: return .global
        }
    }

    /// IPv6, with the forms that embed an IPv4 address judged by that address: IPv4-mapped (`::ffff:a.b.c.d`),
    /// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`, RFC 6052) and 6to4 (`2002::/16`, RFC 3056) — an
    /// attacker writes `[::ffff:169.254.169.254]` or `[64:ff9b::a9fe:a9fe]` to reach what the IPv4 rule refuses.
    private static func reach(ipv6 groups: [UInt16]) -> Reach {
        func embedded(_ high: UInt16, _ low: UInt16) -> Reach {
            reach(ipv4: [UInt8(high >> 8), UInt8(high & 0xFF), UInt8(low >> 8), UInt8(low & 0xFF)])
        }
        if groups.allSatisfy({ $0 == 0 }) { return .loopback }  // ::
        if groups == [0, 0, 0, 0, 0, 0, 0, 1] { return .loopback }
        if groups[0..<5].allSatisfy({ $0 == 0 }), groups[5] == 0xFFFF || groups[5] == 0 {
            return embedded(groups[6], groups[7])
        }
        if groups[0] == 0x64, groups[1] == 0xFF9B, groups[2..<6].allSatisfy({ $0 == 0 }) {
            return embedded(groups[6], groups[7])
        }
        if groups[0] == 0x2002 { return embedded(groups[1], groups[2]) }
        // Documentation (RFC 3849) and discard-only (RFC 6666): never globally reachable.
        if groups[0] == 0x2001, groups[1] == 0x0DB8 { return .privateNetwork }
        if groups[0] == 0x0100, groups[1..<4].allSatisfy({ $0 == 0 }) { return .privateNetwork }
        switch groups[0] {
        case 0xFE80...0xFEBF: return .linkLocal
        case 0xFC00...0xFDFF, 0xFEC0...0xFEFF, 0xFF00...0xFFFF: return .privateNetwork  // ULA, site-local, multicast
        default: return .global
        }
    }
}
