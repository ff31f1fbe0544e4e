import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file operations behind ``TokenStore``: reading with mode repair, setting aside, deleting, and cleaning up
/// after writers that died.
extension TokenStore {
    /// The file's contents, or nil when there is no file.
    func readContents() throws(StateError) -> TokenFile.Contents? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .cannotRead(path: path)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .unusable(reason: "not a regular file") }
        if info.st_mode & 0o777 != 0o600 {
            // Tightened (or, for an owner-only mode like 0400, normalised) rather than refused: see TokenStore.
            guard chmod(path, 0o600) == 0 else {
                throw .cannotWrite(
                    path: path, reason: "its mode is not 0600 and cannot be changed: \(Self.lastError())")
            }
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .cannotRead(path: path)
        }
        defer { close(fd) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path)
            }
            bytes += chunk[..<count]
        }
        return TokenFile.decode(Data(bytes))
    }

    /// Renames the unusable file to `<file>.corrupt-<UTC time>` (never over an existing file) and reports it.
    /// The caller holds the lock.
    func setAside(reason: String) throws(StateError) -> TokenStoreLoad {
        let now: String = Date().formatted(.iso8601)
        let stamp = now.filter { $0 != "-" && $0 != ":" }
        var target = path + ".corrupt-" + stamp
        var attempt = 1
        var info = stat()
        // rename(2) replaces an existing target; two set-asides within one second must both survive.
        while lstat(target, &info) == 0 {
            attempt += 1
            target = path + ".corrupt-\(stamp)-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            throw .cannotWrite(path: path, reason: "cannot set it aside as \(target): \(Self.lastError())")
        }
        synchronizeDirectory()
        return .setAside(original: path, movedTo: target, reason: reason)
    }

    /// Writes `account` atomically. The caller holds the lock.
    func writeFile(_ account: PersistedAccount) throws(StateError) {
        let data: Data
        do {
            data = try TokenFile.encode(account)
        } catch {
            throw .cannotWrite(path: path, reason: "the account cannot be encoded")
        }
        try directory.writeUnlocked(data, to: fileName)
    }

    /// Deletes the file if there is one. The caller holds the lock.
    func deleteFile() throws(StateError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw .cannotWrite(path: path, reason: Self.lastError())
        }
        synchronizeDirectory()
    }

    /// Deletes the temporary files of writes that never finished — a process killed between creating
    /// `StateDirectory`'s `.<name>.<pid>.tmp` and renaming it. The caller holds the lock, and every writer writes
    /// only while holding it, so any such file belongs to a writer that is gone. Without this each crash would
    /// leave its (secret-bearing) temporary file behind for good, because the next writer has another pid.
    package func removeAbandonedTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let prefix = "." + fileName + "."
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let pid = name.dropFirst(prefix.count).dropLast(".tmp".count)
            guard !pid.isEmpty, pid.allSatisfy({ ("0"..."9").contains($0) }) else { continue }
            unlink(directory.path + "/" + name)
        }
    }

    /// Makes the directory 0700 if it exists with another mode (see TokenStore for why it is not refused).
    func tightenDirectoryMode() throws(StateError) {
        var info = stat()
        guard stat(directory.path, &info) == 0, info.st_mode & 0o777 != 0o700 else { return }
        guard chmod(directory.path, 0o700) == 0 else {
            throw .cannotCreate(path: directory.path, reason: Self.lastError())
        }
    }

    /// Makes a rename or unlink durable: the directory entry lives in the directory (POSIX fsync).
    private func synchronizeDirectory() {
        let fd = open(directory.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
