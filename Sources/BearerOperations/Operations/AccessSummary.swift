import BearerConfiguration
import BearerDataPlane
import BearerHTTP
import BearerJSON
import BearerSignIn
import BearerTelemetry
import BearerTokens

/// Who may use the proxy, as `status` and `/-/status` show it (SPEC §9): the listener and each check in force. Never a
/// secret: whether a client key is required, not the key.
public struct AccessSummary: Sendable, Equatable {
    /// Where clients connect, as `listen` writes them (the bound ones for a running proxy, the configured ones for
    /// `status`).
    public var listeners: [String]
    /// Whether loopback connections from other local users are closed (Linux); false where it cannot be checked.
    var peerUserCheck: Bool
    /// The uids let in besides the proxy's own.
    var allowUsers: [UInt32]
    /// Whether every request must carry the client key (a non-loopback listener, or `requireKey`): on every
    /// listener, as ``SafetyPolicy`` applies it.
    var clientKeyRequired: Bool
    /// The global `requireHeader`'s name, if any (a route's own shows in its entry).
    var requiredHeader: String?

    /// - Parameter peerUserCheck: whether this platform can tell who owns a peer socket (``PeerUserPolicy``, which
    ///   this folder does not see: the composition root asks it).
    public init(configuration: Configuration, listeners: [Listener], peerUserCheck: Bool) {
        self.listeners = listeners.map(\.description)
        self.peerUserCheck = peerUserCheck
        allowUsers = configuration.allowUsers
        clientKeyRequired = configuration.requireKey || listeners.contains { !$0.isLocal }
        requiredHeader = configuration.requireHeader?.name
    }

    /// The JSON object of `/-/status` and `status --json` (`"access"`).
    var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "listeners": listeners,
            "peerUserCheck": peerUserCheck ? "on" : "unavailable on this platform",
            "allowUsers": allowUsers.map { Int($0) },
            "clientKeyRequired": clientKeyRequired,
        ]
        if let requiredHeader { object["requireHeader"] = requiredHeader }
        return object
    }

    /// The line of `status`'s text.
    package var line: String {
        var parts = [
            (listeners.count == 1 ? "listener " : "listeners ") + listeners.joined(separator: ", "),
            peerUserCheck
                ? "other local users refused"
                    + (allowUsers.isEmpty ? "" : " except uid \(allowUsers.map(String.init).joined(separator: ", "))")
                : "other local users not checked (unavailable on this platform)",
            clientKeyRequired ? "client key required" : "no client key",
        ]
        if let requiredHeader { parts.append("header \(requiredHeader) required") }
        return "access: " + parts.joined(separator: "; ")
    }
}
