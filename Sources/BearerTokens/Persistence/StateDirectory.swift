import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import Logging

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

/// Where the proxy keeps what must survive a restart (the dev issuer's key, later the token cache).
///
/// SPEC §7: `$XDG_STATE_HOME/bearer-proxy/` (default `~/.local/state/bearer-proxy/`), a 0700 directory whose files
/// are 0600 and written atomically — temporary file, fsync, rename — under an advisory lock, so neither a crash nor
/// two processes writing at once can leave a torn file behind.
public struct StateDirectory: Sendable, Hashable {
    /// The directory's absolute path.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The default location for `environment` (XDG Base Directory Specification 0.8, `XDG_STATE_HOME`).
    public static func standard(environment: [String: String]) -> StateDirectory {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return StateDirectory(path: state + "/bearer-proxy")
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return StateDirectory(path: home + "/.local/state/bearer-proxy")
    }

    /// Creates the directory (and its parents) if needed and makes sure it is private to the user.
    public func prepare() throws(StateError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotCreate(path: path, reason: "\(error)")
        }
        if chmod(path, 0o700) != 0 { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
    }

    /// The contents of `name`, or nil when it does not exist.
    public func read(_ name: String) throws(StateError) -> Data? {
        let file = path + "/" + name
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        guard let data = FileManager.default.contents(atPath: file) else { throw .cannotRead(path: file) }
        return data
    }

    /// Replaces `name` with `data` atomically, readable and writable by the owner only.
    public func write(_ data: Data, to name: String) throws(StateError) {
        try prepare()
        try withLock { () throws(StateError) in try writeUnlocked(data, to: name) }
    }

    /// ``write(_:to:)`` for a caller that already holds ``withLock(_:)``.
    public func writeUnlocked(_ data: Data, to name: String) throws(StateError) {
        let target = path + "/" + name
        let temporary = path + "/.\(name).\(getpid()).tmp"
        // O_CLOEXEC on every descriptor here: a child started meanwhile (a `command` flow, a browser, a test's
        // `serve`) must not inherit it — above all not the lock's, which would keep the flock held.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateError.cannotWrite(path: temporary, reason: Self.lastError()) }
        // The mode is set explicitly too, whatever the umask or an older temporary file had.
        fchmod(fd, 0o600)
        var failure: String?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc_write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Self.lastError()
                    return
                }
                offset += written
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = Self.lastError() }
        close(fd)
        if let failure {
            unlink(temporary)
            throw StateError.cannotWrite(path: target, reason: failure)
        }
        guard rename(temporary, target) == 0 else {
            let reason = Self.lastError()
            unlink(temporary)
            throw StateError.cannotWrite(path: target, reason: reason)
        }
        // Make the rename itself durable (POSIX: the directory entry lives in the directory).
        let directory = open(path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// How long ``withLock(_:)`` waits for another process's write: far longer than one write takes (a read, an
    /// fsync and a rename, milliseconds), so an honest writer is always waited for; a writer stopped inside its
    /// write, or a disk that hangs, is not waited for forever.
    static let maximumLockWait: Duration = .seconds(10)
    /// How long a wait goes on before it is logged, so that the ordinary moment of contention says nothing.
    static let lockWaitNotice: Duration = .seconds(1)

    /// Runs `body` holding an exclusive advisory lock on the directory's lock file, so two processes never
    /// interleave their read-modify-write cycles. The lock is tried without blocking, with growing pauses, for at
    /// most ``maximumLockWait``; a wait past ``lockWaitNotice`` is logged once, saying what it waits for, and one
    /// past the limit fails (``StateError/cannotWrite(path:reason:)`` naming the lock) rather than hang.
    public func withLock<T>(_ body: () throws(StateError) -> T) throws(StateError) -> T {
        try prepare()
        let lockPath = path + "/.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path: lockPath, reason: Self.lastError()) }
        defer { close(fd) }
        try acquire(fd, lockPath: lockPath)
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private func acquire(_ fd: Int32, lockPath: String) throws(StateError) {
        let started = ContinuousClock.now
        var pause = Duration.milliseconds(1)
        var announced = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw .cannotWrite(path: lockPath, reason: Self.lastError())
            }
            let waited = ContinuousClock.now - started
            if waited >= Self.maximumLockWait {
                throw .cannotWrite(
                    path: lockPath,
                    reason: "another process has held this lock for over \(Self.maximumLockWait) — one stopped "
                        + "inside a write of its state, or a disk that hangs; nothing was read or written")
            }
            if !announced, waited >= Self.lockWaitNotice {
                announced = true
                Logger(label: "bearer-proxy.state").warning(
                    "waiting for the state directory's lock \(lockPath): another process is writing its state there (at most \(Self.maximumLockWait))"
                )
            }
            // Parks only this thread (a writes' queue, a command's), never an event loop: nothing on one writes here.
            usleep(UInt32(pause / .microseconds(1)))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Removes the temporary files (`.<name>.<pid>.tmp`) of writes that never finished — a writer killed between
    /// its write and its rename leaves one, holding tokens — when no write is under way: only a holder of the lock
    /// writes one, so while the lock is free none is in use. Does nothing when another process holds the lock (the
    /// next start cleans up).
    public func removeAbandonedTemporaryFiles() {
        let lockPath = path + "/.lock"
        // Created if missing (in an existing directory only: a process that writes nothing creates no directory).
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        defer { flock(fd, LOCK_UN) }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where Self.isTemporaryFileName(name) { unlink(path + "/" + name) }
    }

    /// Whether `name` is one of ``writeUnlocked(_:to:)``'s temporary files: `.<name>.<pid>.tmp`.
    static func isTemporaryFileName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return false }
        let stem = name.dropLast(".tmp".count)
        guard let dot = stem.lastIndex(of: ".") else { return false }
        let pid = stem[stem.index(after: dot)...]
        return !pid.isEmpty && pid.allSatisfy { ("0"..."9").contains($0) }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// `write` is shadowed inside `StateDirectory` by the method of the same name; this reaches the system call.
private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        return Glibc.write(fd, buffer, count)
    #else
        return Darwin.write(fd, buffer, count)
    #endif
}

/// A failure to use the state directory; every case names the path so the user can fix permissions.
public enum StateError: Error, Sendable, CustomStringConvertible {
    case cannotCreate(path: String, reason: String)
    case cannotRead(path: String)
    case cannotWrite(path: String, reason: String)
    case corrupt(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): "cannot create state directory \(path): \(reason)"
        case .cannotRead(let path): "cannot read \(path)"
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .corrupt(let path, let reason): "\(path) is unreadable (\(reason)); delete it to start afresh"
        }
    }
}
