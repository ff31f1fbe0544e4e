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
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard HostName.ipv6Groups(host) != nil else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard HostName.ipv4Octets(host) != nil || HostName.isValidName(host) else { return nil }
        }
        guard let port = Authority.port(portText) else { return nil }
        self.init(host: host.lowercased(), port: port)
    }

    /// Whether only this machine can connect: `localhost`, 127.0.0.0/8 or `::1`.
    public var isLoopback: Bool { HostName.isLoopback(host) }

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String { "\(Authority.bracketed(host)):\(port)" }
}
