import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The two ends of a loopback TCP connection as the proxy accepted it, in the form the kernel's socket tables use:
/// the peer's socket is the one whose local end is `peer` and whose remote end is `local`.
package struct SocketEnds: Sendable, Equatable {
    enum Family: Sendable, Equatable {
        case inet
        case inet6
    }

    let family: Family
    /// The peer's address, 4 bytes (IPv4) or 16 (IPv6), network order.
    let peerAddress: [UInt8]
    let peerPort: UInt16
    /// The proxy's end of the connection, in the same family.
    let localAddress: [UInt8]
    let localPort: UInt16

    /// Whether the peer is on this machine's loopback interface (127.0.0.0/8, ::1, or IPv4-mapped 127/8): such a peer
    /// is always a local socket, so a lookup that finds none fails closed rather than reading as "another machine".
    var isLoopback: Bool {
        switch family {
        case .inet: return peerAddress.first == 127
        case .inet6:
            if peerAddress == [UInt8](repeating: 0, count: 15) + [1] { return true }
            let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]
            return Array(peerAddress.prefix(12)) == mapped && peerAddress[12] == 127
        }
    }

    init(family: Family, peerAddress: [UInt8], peerPort: UInt16, localAddress: [UInt8], localPort: UInt16) {
        self.family = family
        self.peerAddress = peerAddress
        self.peerPort = peerPort
        self.localAddress = localAddress
        self.localPort = localPort
    }
}
