import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens

/// The request guard's settings, fixed at start-up from the configuration, the listen address and the environment
/// (SPEC §9). Defaults are safe: loopback Hosts only, no cross-site browser requests, no client key needed on a
/// loopback listener.
public struct SafetyPolicy: Sendable {
    /// Hostnames a request's `Host` may name besides `localhost`, `127.0.0.1` and `[::1]` (lowercased, no port).
    var allowedHosts: Set<String>
    /// Browser origins (`scheme://host[:port]`, lowercased) that may call the proxy, with CORS.
    var allowedOrigins: Set<String>
    /// The client key every request must present, when one is required.
    public var clientKey: ClientKey?
    /// Largest request target accepted (longer → 414). RFC 9112 §3 recommends supporting at least 8000 octets.
    var maximumURILength = 8 * 1024
    /// Largest header section accepted, in bytes of names and values (larger → 431, RFC 6585 §5).
    var maximumHeaderBytes = 32 * 1024
    /// Most header fields accepted (more → 431).
    var maximumHeaderCount = 100
    /// Who may connect over loopback: the proxy's own user and `allowUsers` (SPEC §9).
    public var peerUsers = PeerUserPolicy()

    /// The names a `Host` may always have: the loopback interface (kubernetes #8871: anchored, exact names).
    static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    public init(allowedHosts: [String] = [], allowedOrigins: [String] = [], clientKey: ClientKey? = nil) {
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.allowedOrigins = Set(allowedOrigins.map { $0.lowercased() })
        self.clientKey = clientKey
    }

    /// The policy for `configuration` served on `listeners`, with `BEARER_PROXY_KEY` from `environment`.
    ///
    /// A non-loopback listener needs a client key or `"allowRemote": true` — anyone who can reach it could
    /// otherwise act as the signed-in account — so that combination is refused here, before anything listens.
    /// The key, once required by one listener, is required on all of them: one rule per proxy, so that a socket
    /// file or a loopback port next to a remote one is never the way around it.
    public static func make(
        for configuration: Configuration, listeners: [Listener], environment: [String: String],
        peerLookup: PeerUserPolicy.Lookup = .kernel
    ) throws(StartupError) -> SafetyPolicy {
        let key = environment[Configuration.clientKeyVariable].flatMap { $0.isEmpty ? nil : ClientKey($0) }
        let remote = listeners.filter { !$0.isLocal }
        if let first = remote.first, key == nil, !configuration.allowRemote {
            throw .remoteWithoutKey(address: first.description)
        }
        let required = configuration.requireKey || !remote.isEmpty
        var policy = SafetyPolicy(
            allowedHosts: configuration.allowedHosts, allowedOrigins: configuration.allowedOrigins,
            clientKey: required ? key : nil)
        policy.peerUsers = PeerUserPolicy(allowUsers: configuration.allowUsers, lookup: peerLookup)
        return policy
    }
}

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
