import BearerHTTP
import BearerJSON

/// Where the proxy listens: `127.0.0.1:8080`, `localhost:0`, `[::1]:8080`, `0.0.0.0:80`.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A host name or IP address; IPv6 without brackets.
    public var host: String
    /// 0...65535; 0 lets the system pick a free port.
    public var port: Int

    /// The default: loopback only, port 8080.
    public static let `default` = ListenAddress(host: "127.0.0.1", port: 8080)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, with IPv6 hosts in brackets; `nil` if it is not one.
    public init?(parsing text: String) {
        guard let (host, port) = try? HostName.authority(text[...]), let port else { return nil }
        self.init(host: host, port: port)
    }

    /// Whether only this machine can connect: `localhost`, 127.0.0.0/8 or `::1`.
    public var isLoopback: Bool { HostName.isLoopback(host) }

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String { "\(Authority.bracketed(host)):\(port)" }
}
