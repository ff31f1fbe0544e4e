import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The ports ``closedPort()`` hands out: counted up from a random start in 20000–32000, so one run never gives
/// the same port twice and parallel runs rarely meet.
enum FreePorts {
    static let next = Mutex(20_000 + Int.random(in: 0..<12_000))

    /// Whether 127.0.0.1:`port` can be bound right now (tried, then released).
    static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
