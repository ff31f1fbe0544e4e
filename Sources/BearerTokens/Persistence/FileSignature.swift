import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A cheap fingerprint of a file — which inode, how big, when last modified — for noticing that another process
/// replaced it without reading it.
///
/// Every write of the token cache renames a new file into place, so the inode (and usually the size) changes; the
/// modification time adds nanoseconds as a tie-breaker. Two different contents could only share a signature if a
/// rewrite reused the just-freed inode number, kept the exact size and landed in the same kernel clock tick (a few
/// milliseconds) — a poller that misses such a change sees the next one.
public struct FileSignature: Sendable, Hashable {
    var device: UInt64
    var inode: UInt64
    public var size: Int64
    var modificationSeconds: Int64
    var modificationNanoseconds: Int64

    init(device: UInt64, inode: UInt64, size: Int64, modificationSeconds: Int64, modificationNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationSeconds = modificationSeconds
        self.modificationNanoseconds = modificationNanoseconds
    }

    /// The signature of the file at `path` (following symbolic links), or nil when it does not exist or cannot be
    /// examined.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = info.st_mtimespec
        #else
            let modified = info.st_mtim
        #endif
        self.init(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(info.st_size), modificationSeconds: Int64(modified.tv_sec),
            modificationNanoseconds: Int64(modified.tv_nsec))
    }
}
