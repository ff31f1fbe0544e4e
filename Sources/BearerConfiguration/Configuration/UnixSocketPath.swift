import BearerHTTP
import BearerJSON

/// Where a Unix-domain socket listener's file is: an absolute path short enough for `sun_path`.
public struct UnixSocketPath: Sendable, Hashable {
    public let path: String

    /// `unix:` alone: `$XDG_RUNTIME_DIR/bearer-proxy/proxy.sock` — the runtime directory is the user's own (0700,
    /// removed at logout: XDG Base Directory Specification), the place for sockets.
    static let defaultName = "bearer-proxy/proxy.sock"

    static func defaultPath(runtimeDirectory: String) -> String {
        runtimeDirectory + (runtimeDirectory.hasSuffix("/") ? "" : "/") + defaultName
    }

    /// `sun_path` holds 108 bytes on Linux and 104 on macOS, its terminating NUL included (unix(7)); a longer path
    /// fails only at bind time, with an unhelpful error, so it is refused when the file is read.
    static var maximumBytes: Int {
        #if os(Linux)
            107
        #else
            103
        #endif
    }

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(bytes: Int)
        case notAFileName
        case controlCharacter

        public var description: String {
            switch self {
            case .tooLong(let bytes):
                "a socket path may have at most \(UnixSocketPath.maximumBytes) bytes (the kernel's limit); this one "
                    + "has \(bytes)"
            case .notAFileName: "a socket path must end in a file name, not \"/\", \".\" or \"..\""
            case .controlCharacter: "a socket path must not contain control characters"
            }
        }
    }

    /// `path` must be absolute; ``Listener/parse(_:runtimeDirectory:relativeTo:)`` makes it so.
    public init(_ path: String) throws(Problem) {
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { throw .controlCharacter }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        if path.hasSuffix("/") || name.isEmpty || name == "." || name == ".." { throw .notAFileName }
        if path.utf8.count > Self.maximumBytes { throw .tooLong(bytes: path.utf8.count) }
        self.path = path
    }

    /// The directory that holds the socket file.
    public var directory: String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }
}
