import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file of a Unix-domain socket listener (SPEC §9), from before `bind` to its removal at shutdown.
///
/// Who may connect to a socket file is decided by the file system before the proxy sees anything: `connect` needs
/// write permission on the file and search permission on every directory above it (unix(7)). So the file is made
/// 0600 inside a directory that only the owner can change, and ``PeerUserCheck`` then asks the kernel who connected
/// (`SO_PEERCRED`) for the users the modes do not stop (root).
///
/// - The directory is created 0700 when missing (its parent must exist). An existing one must belong to the
///   proxy's user and be writable by nobody else: whoever can write to it could replace the socket with their own
///   and receive the owner's requests.
/// - A file already at the path is replaced only when it is a socket of this user that nothing answers on (a proxy
///   that died without cleaning up). A live one means another proxy is serving there; anything else is not ours.
/// - At shutdown the file is removed — only if it is still the one this proxy bound.
struct UnixSocketFile: Sendable {
    package let path: UnixSocketPath
    /// The file `bind` made, to tell it from one put there later.
    private let identity: FileIdentity

    private struct FileIdentity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// Why the socket file cannot be used; each says what to do.
    package enum Failure: Error, CustomStringConvertible {
        case directory(String, reason: String)
        case occupied(String, reason: String)
        case system(String, call: String, errno: Int32)

        package var description: String {
            switch self {
            case .directory(let path, let reason): "the socket's directory \(path) \(reason)"
            case .occupied(let path, let reason): "\(path) \(reason)"
            case .system(let path, let call, let code): "\(call) \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Makes the directory safe and the path free; call it before binding.
    package static func prepare(_ path: UnixSocketPath, owner: uid_t = geteuid()) throws(Failure) {
        try prepareDirectory(path.directory, owner: owner)
        try clearStaleSocket(path.path, owner: owner)
    }

    /// A socket bound at `path`, for NIO to listen on (`ServerBootstrap.withBoundSocket`).
    ///
    /// The proxy binds it itself because NIO, closing a Unix-domain listener it bound, unlinks whatever socket is
    /// at its path then — a socket another program put there after the proxy started included. A listener handed
    /// over already bound is left to its owner to clean up: ``remove()`` does, and only if the file is still the
    /// one bound here.
    static func bindSocket(_ path: UnixSocketPath) throws(Failure) -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw .system(path.path, call: "socket", errno: errno) }
        let address: SocketAddress
        do {
            address = try SocketAddress(unixDomainSocketPath: path.path)
        } catch {
            close(descriptor)
            throw .system(path.path, call: "bind", errno: ENAMETOOLONG)
        }
        guard address.withSockAddr({ bind(descriptor, $0, socklen_t($1)) }) == 0 else {
            let code = errno
            close(descriptor)
            throw .system(path.path, call: "bind", errno: code)
        }
        return descriptor
    }

    /// Restricts the socket file that `bind` created to its owner and records which file it is.
    static func bound(_ path: UnixSocketPath) throws(Failure) -> UnixSocketFile {
        // bind(2) made the file with the process's umask; the directory (0700, or writable by the owner only)
        // keeps others out of the moment before this, and the peer check refuses them anyway.
        guard chmod(path.path, 0o600) == 0 else { throw .system(path.path, call: "chmod", errno: errno) }
        var status = stat()
        guard lstat(path.path, &status) == 0 else { throw .system(path.path, call: "lstat", errno: errno) }
        return UnixSocketFile(
            path: path, identity: FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)))
    }

    /// Removes the socket file if it is still the one this proxy bound.
    package func remove() {
        var status = stat()
        guard lstat(path.path, &status) == 0,
            FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)) == identity
        else { return }
        unlink(path.path)
    }

    private static func prepareDirectory(_ directory: String, owner: uid_t) throws(Failure) {
        var status = stat()
        if stat(directory, &status) != 0 {
            guard errno == ENOENT else { throw .system(directory, call: "stat", errno: errno) }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw .system(directory, call: "mkdir", errno: errno)
            }
            guard stat(directory, &status) == 0 else { throw .system(directory, call: "stat", errno: errno) }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .directory(directory, reason: "is not a directory") }
        guard status.st_uid == owner else {
            throw .directory(
                directory,
                reason: "belongs to uid \(status.st_uid), not to this proxy's user (uid \(owner)): its owner could "
                    + "replace the socket; use a directory of your own")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw .directory(
                directory,
                reason: "is writable by other users (mode \(String(status.st_mode & 0o7777, radix: 8))), who could "
                    + "replace the socket; run: chmod 700 \(directory)")
        }
    }

    private static func clearStaleSocket(_ path: String, owner: uid_t) throws(Failure) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw .system(path, call: "lstat", errno: errno)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw .occupied(path, reason: "exists and is not a socket; not replacing it")
        }
        guard status.st_uid == owner else {
            throw .occupied(
                path, reason: "is a socket of uid \(status.st_uid), not this proxy's user; not replacing it")
        }
        switch probe(path) {
        case 0:
            throw .occupied(path, reason: "is in use: another process (a running bearer-proxy?) answers on it")
        case ECONNREFUSED:
            // Nobody listens: a proxy that ended without removing it.
            guard unlink(path) == 0 || errno == ENOENT else { throw .system(path, call: "unlink", errno: errno) }
        case let code:
            throw .system(path, call: "connect", errno: code)
        }
    }

    /// 0 when something accepts connections on `path`, else the errno of `connect`.
    private static func probe(_ path: String) -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        // NIO builds the address (and refuses a path too long for `sun_path`).
        guard let address = try? SocketAddress(unixDomainSocketPath: path) else { return ENAMETOOLONG }
        let result = address.withSockAddr { connect(descriptor, $0, socklen_t($1)) }
        return result == 0 ? 0 : errno
    }
}
