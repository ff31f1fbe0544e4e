import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// The fallback for ``SocketDiagnostics``: the kernel's TCP socket tables as text, `/proc/net/tcp` and
/// `/proc/net/tcp6` (proc(5)). Each line names a socket's local and remote end and its owner's uid; the peer's
/// socket is the line whose local end is the peer and whose remote end is the proxy. Reading the table costs more
/// than one netlink request (it lists every socket), so it is used only where netlink is unavailable.
package struct ProcNetTCP: Sendable, Equatable {
    /// The table of IPv4 sockets (`/proc/net/tcp`).
    package let tcp: String
    /// The table of IPv6 sockets (`/proc/net/tcp6`).
    package let tcp6: String

    /// The kernel's own tables.
    package static let kernel = ProcNetTCP(tcp: "/proc/net/tcp", tcp6: "/proc/net/tcp6")

    package init(tcp: String, tcp6: String) {
        self.tcp = tcp
        self.tcp6 = tcp6
    }

    /// The uid owning the peer's socket, or nil when no line matches.
    package static func owner(of ends: SocketEnds, table: String) -> UInt32? {
        let local = endText(ends.peerAddress, ends.peerPort)
        let remote = endText(ends.localAddress, ends.localPort)
        for line in table.split(separator: "\n").dropFirst() {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1] == local, fields[2] == remote else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// The uid owning the peer's socket, read from the table for its family.
    package func owner(of ends: SocketEnds) -> Result<UInt32, PeerUserPolicy.LookupFailure> {
        let path = ends.family == .inet ? tcp : tcp6
        guard let table = Self.readWhole(path) else { return .failure(.other("cannot read \(path)")) }
        guard let uid = Self.owner(of: ends, table: table) else { return .failure(.notLocal) }
        return .success(uid)
    }

    /// The whole file: a procfs file reports size 0 and is produced as it is read, so it is read to its end in a
    /// loop (a reader that trusts the size, or stops at one page, sees only the first sockets).
    private static func readWhole(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An end as the table prints it: the address as 32-bit words in the host's byte order (`%08X` each), a colon,
    /// the port (`%04X`).
    package static func endText(_ address: [UInt8], _ port: UInt16) -> Substring {
        var text = ""
        var index = 0
        while index + 4 <= address.count {
            // The kernel prints each __be32 word as the host reads it: on a little-endian machine, bytes reversed.
            let native = address[index..<index + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            text += hex(native, width: 8)
            index += 4
        }
        return Substring(text + ":" + hex(UInt32(port), width: 4))
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
