/// Why the proxy could not start; each names what to change.
public enum StartupError: Error, Sendable, CustomStringConvertible {
    case cannotListen(address: String, reason: String)
    case remoteWithoutKey(address: String)

    public var description: String {
        switch self {
        case .cannotListen(let address, let reason): "cannot listen on \(address): \(reason)"
        case .remoteWithoutKey(let address):
            "listen: \(address) is not a loopback address, so anyone who can reach it could use this account; set "
                + "BEARER_PROXY_KEY (clients then send it) or, behind a NetworkPolicy, \"allowRemote\": true"
        }
    }
}
