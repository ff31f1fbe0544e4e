import BearerHTTP
import BearerJSON

/// One socket the proxy accepts clients on (SPEC §9): a TCP address, or a Unix-domain socket file.
///
/// routes.json's `listen` (a string or an array of them) and `serve --listen` (repeatable) write each as
/// `host:port` or `unix:PATH`; `unix:` alone means ``UnixSocketPath/defaultName`` under `$XDG_RUNTIME_DIR`.
public enum Listener: Sendable, Hashable, CustomStringConvertible {
    case tcp(ListenAddress)
    case unix(UnixSocketPath)

    /// The default: loopback only, port 8080.
    public static let `default` = Listener.tcp(.default)

    /// The prefix that marks a Unix-domain socket.
    static let unixPrefix = "unix:"

    /// Why a `listen` value is not one.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notAnAddress
        case noRuntimeDirectory
        case path(UnixSocketPath.Problem)

        public var description: String {
            switch self {
            case .notAnAddress:
                "must be \"host:port\" such as \"127.0.0.1:8080\" (IPv6 as \"[::1]:8080\") or \"unix:PATH\""
            case .noRuntimeDirectory:
                "\"unix:\" without a path means $XDG_RUNTIME_DIR/bearer-proxy/proxy.sock, and XDG_RUNTIME_DIR is not "
                    + "set; write the path, as in \"unix:/run/bearer-proxy/proxy.sock\""
            case .path(let problem): "\(problem)"
            }
        }
    }

    /// Reads `text`: `host:port`, `unix:PATH` (relative paths resolve against `directory`), or `unix:` for the
    /// default path under `runtimeDirectory` (`$XDG_RUNTIME_DIR`).
    public static func parse(
        _ text: String, runtimeDirectory: String?, relativeTo directory: String
    ) throws(Problem) -> Listener {
        guard text.hasPrefix(unixPrefix) else {
            guard let address = ListenAddress(parsing: text) else { throw .notAnAddress }
            return .tcp(address)
        }
        let written = String(text.dropFirst(unixPrefix.count))
        let path: String
        if written.isEmpty {
            guard let runtimeDirectory, runtimeDirectory.hasPrefix("/") else { throw .noRuntimeDirectory }
            path = UnixSocketPath.defaultPath(runtimeDirectory: runtimeDirectory)
        } else {
            path = written.hasPrefix("/") ? written : directory + (directory.hasSuffix("/") ? "" : "/") + written
        }
        do {
            return .unix(try UnixSocketPath(path))
        } catch {
            throw .path(error)
        }
    }

    /// Whether only this machine can connect: a loopback address, or a socket file.
    public var isLocal: Bool {
        switch self {
        case .tcp(let address): address.isLoopback
        case .unix: true
        }
    }

    /// The TCP address, if this is one.
    var tcpAddress: ListenAddress? {
        if case .tcp(let address) = self { address } else { nil }
    }

    /// As written: `host:port` or `unix:PATH`.
    public var description: String {
        switch self {
        case .tcp(let address): address.description
        case .unix(let path): Self.unixPrefix + path.path
        }
    }
}

extension [Listener] {
    /// The first TCP address, which the dev issuer's URL and the Firebase redirect name; nil when the proxy
    /// listens on socket files only.
    public var firstTCPAddress: ListenAddress? { lazy.compactMap(\.tcpAddress).first }
}
