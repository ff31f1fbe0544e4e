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
/// socket is the line whose local end is the peer and whose remote end is the proxy.
///
/// The table lists every TCP socket of the host, and the kernel writes it out as it is read: a busy host's
/// TIME_WAITs make it tens of thousands of lines, megabytes, so one lookup costs milliseconds — far more than one
/// netlink request. It is used only where netlink is unavailable, and ``PeerUserCheck`` runs it on a blocking-I/O
/// thread, never on an event loop. It reads the table in pieces, looks only for the two ends side by side
/// (`strstr(3)`, nothing split or copied per line), and stops reading at the line that matches.
package struct ProcNetTCP: Sendable, Equatable {
    /// The table of IPv4 sockets (`/proc/net/tcp`).
    package let tcp: String
    /// The table of IPv6 sockets (`/proc/net/tcp6`).
    let tcp6: String

    /// The kernel's own tables.
    package static let kernel = ProcNetTCP(tcp: "/proc/net/tcp", tcp6: "/proc/net/tcp6")

    init(tcp: String, tcp6: String) {
        self.tcp = tcp
        self.tcp6 = tcp6
    }

    /// The uid owning the peer's socket in `table`, or nil when no line matches.
    static func owner(of ends: SocketEnds, table: String) -> UInt32? {
        let needle = Self.needle(for: ends)
        return table.withCString { text in needle.withUnsafeBufferPointer { uid(in: text, needle: $0) } }
    }

    /// The uid owning the peer's socket, read from the table for its family. It blocks while the file is read:
    /// call it off the event loop.
    func owner(of ends: SocketEnds) -> Result<UInt32, PeerUserPolicy.LookupFailure> {
        let path = ends.family == .inet ? tcp : tcp6
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.other("cannot read \(path): \(Self.lastError)")) }
        defer { close(descriptor) }
        let needle = Self.needle(for: ends)
        // A procfs file reports size 0 and is produced as it is read, so it is read to its end in a loop (a reader
        // that trusts the size, or stops at one page, sees only the first sockets). `filled` bytes are held: the
        // start of a line the next read completes. One byte more than they is kept for the NUL strstr needs.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024 + 1)
        var filled = 0
        while true {
            if filled == buffer.count - 1 {
                // A line longer than the buffer (none the kernel writes): make room for the rest of it.
                buffer += [UInt8](repeating: 0, count: buffer.count)
            }
            let count = buffer.withUnsafeMutableBytes {
                read(descriptor, $0.baseAddress! + filled, $0.count - 1 - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.other("cannot read \(path): \(Self.lastError)"))
            }
            let atEnd = count == 0
            filled += count
            // Whole lines only, until the end: the last line may lack its newline.
            var whole = filled
            if !atEnd {
                while whole > 0, buffer[whole - 1] != UInt8(ascii: "\n") { whole -= 1 }
            }
            if whole > 0 {
                let displaced = buffer[whole]
                buffer[whole] = 0
                let found = buffer.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { text in
                        needle.withUnsafeBufferPointer { Self.uid(in: text.baseAddress!, needle: $0) }
                    }
                }
                if let found { return .success(found) }
                buffer[whole] = displaced
                buffer.withUnsafeMutableBytes { bytes in
                    _ = memmove(bytes.baseAddress!, bytes.baseAddress! + whole, filled - whole)
                }
                filled -= whole
            }
            if atEnd { return .failure(.notLocal) }
        }
    }

    private static var lastError: String { String(cString: strerror(errno)) }

    /// The peer's socket's two ends as its line prints them, side by side: its local end (the peer), one space,
    /// its remote end (the proxy), and the space before the state; NUL-terminated.
    private static func needle(for ends: SocketEnds) -> [CChar] {
        let text =
            String(endText(ends.peerAddress, ends.peerPort)) + " " + String(endText(ends.localAddress, ends.localPort))
            + " "
        return Array(text.utf8CString)
    }

    /// The uid on the line of the NUL-terminated `text` whose local and remote ends are `needle`.
    private static func uid(in text: UnsafePointer<CChar>, needle: UnsafeBufferPointer<CChar>) -> UInt32? {
        let length = needle.count - 1
        var from = text
        while let found = strstr(from, needle.baseAddress!) {
            if startsTheLine(found, in: text), let uid = uidField(after: UnsafePointer(found) + length) {
                return uid
            }
            from = UnsafePointer(found) + 1
        }
        return nil
    }

    /// Whether `position` is where a line's local end begins: after `%4d: `, the slot number (proc(5)). Anywhere
    /// else the ends found are not the socket's own pair.
    private static func startsTheLine(_ position: UnsafeMutablePointer<CChar>, in text: UnsafePointer<CChar>) -> Bool {
        var cursor = UnsafePointer(position)
        func previous() -> UInt8? {
            guard cursor > text else { return nil }
            cursor -= 1
            return UInt8(bitPattern: cursor.pointee)
        }
        guard previous() == UInt8(ascii: " "), previous() == UInt8(ascii: ":") else { return false }
        var digits = 0
        while true {
            switch previous() {
            case .some(let byte) where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"): digits += 1
            case .some(UInt8(ascii: " ")): continue
            case .none, .some(UInt8(ascii: "\n")): return digits > 0
            default: return false
            }
        }
    }

    /// The uid column of a line, `after` its two ends: past the state, the queues, the timer and the retransmits.
    private static func uidField(after start: UnsafePointer<CChar>) -> UInt32? {
        let space = CChar(UInt8(ascii: " "))
        var cursor = start
        func skipSpaces() { while cursor.pointee == space { cursor += 1 } }
        for _ in 0..<4 {
            skipSpaces()
            while cursor.pointee != space, cursor.pointee != 0, cursor.pointee != CChar(UInt8(ascii: "\n")) {
                cursor += 1
            }
        }
        skipSpaces()
        var uid: UInt32 = 0
        var digits = 0
        while case let byte = UInt8(bitPattern: cursor.pointee), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times, overflowed) = uid.multipliedReportingOverflow(by: 10)
            guard !overflowed, case let (sum, false) = times.addingReportingOverflow(UInt32(byte - UInt8(ascii: "0")))
            else { return nil }
            uid = sum
            digits += 1
            cursor += 1
        }
        return digits > 0 && cursor.pointee == space ? uid : nil
    }

    /// An end as the table prints it: the address as 32-bit words in the host's byte order (`%08X` each), a colon,
    /// the port (`%04X`).
    static func endText(_ address: [UInt8], _ port: UInt16) -> Substring {
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
