import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who may use the proxy from this machine (SPEC §9): a connection whose peer socket belongs to another user of this
/// machine is closed before anything of it is read — unless `allowUsers` names that user.
///
/// On 127.0.0.1 every user of the machine can connect; the proxy acts as its owner, so without this check anyone
/// on a shared build host, CI runner or jump host could use the owner's tokens. The kernel knows who owns the other
/// end (``SocketDiagnostics``, else ``ProcNetTCP``): one lookup per connection, never per request.
///
/// Root gets no exception: it could read the owner's token cache anyway, but the programs that run as root on a
/// machine — a web server's fetcher, a monitoring agent — are exactly the ones that can be made to send requests
/// for someone else. Name it in `allowUsers` to let it in. A lookup that fails refuses the connection (fail
/// closed) and logs why. A peer on another machine (a non-loopback listener) has no socket here: it is admitted,
/// and the client key guards it (SPEC §9).
public struct PeerUserPolicy: Sendable, Equatable {
    /// The uids that may connect: the proxy's own, and `allowUsers`.
    let allowed: Set<UInt32>

    /// How the owner of a peer socket is found; tests put a failing or fixed one in.
    public enum Lookup: Sendable, Equatable {
        /// The kernel's socket diagnostics, then `/proc/net/tcp` where netlink is unavailable.
        case kernel
        /// The `/proc/net/tcp` fallback alone, read from these files as if netlink were unavailable (tests and
        /// measurements of the fallback, with a table of their own).
        case procTables(tcp: String, tcp6: String)
        /// Every lookup answers `uid` (tests of the decision).
        case fixed(UInt32)
        /// Every lookup fails (tests of failing closed).
        case failing
    }

    let lookup: Lookup

    public init(owner: UInt32 = Self.processUser, allowUsers: [UInt32] = [], lookup: Lookup = .kernel) {
        allowed = Set([owner] + allowUsers)
        self.lookup = lookup
    }

    /// The user this process runs as.
    public static var processUser: UInt32 {
        #if canImport(Glibc)
            UInt32(geteuid())
        #else
            0
        #endif
    }

    /// Whether this platform can tell who owns a socket (Linux). Elsewhere the check is off and the listener
    /// behaves as it did before it (the docs say so).
    public static var isAvailable: Bool {
        #if os(Linux)
            true
        #else
            false
        #endif
    }

    /// What becomes of a new connection.
    package enum Decision: Sendable, Equatable {
        /// Served: its peer is the owner or a listed user (`uid`), or not on this machine (`uid` nil).
        case admitted(uid: UInt32?)
        /// Closed: its peer belongs to `uid`, who is not allowed.
        case refused(uid: UInt32)
        /// Closed: nobody could say who the peer is.
        case unknown(reason: String)
    }

    /// The decision for a connection accepted from `remote` on `local`, reading a socket table on the calling
    /// thread if it takes one (tests; the proxy itself uses ``prepare(remote:local:)``).
    func decide(remote: SocketAddress?, local: SocketAddress?) -> Decision {
        switch prepare(remote: remote, local: local) {
        case .decided(let decision): return decision
        case .readTable(let table, let ends): return decide(ends, owner: table.owner(of: ends))
        }
    }

    /// What deciding on a TCP connection takes: nothing more, or reading a socket table.
    package enum Preparation: Sendable, Equatable {
        case decided(Decision)
        /// Netlink is unavailable: the owner is in `table`, a file read that can take milliseconds (``ProcNetTCP``),
        /// to be done off the event loop and handed to ``decide(_:owner:)`` with `ends`.
        case readTable(ProcNetTCP, SocketEnds)
    }

    /// The decision for a connection accepted from `remote` on `local`, when it can be made at once: the addresses
    /// alone, a fixed lookup, or one netlink request (microseconds, answered at once or not at all); else the
    /// table lookup it waits for.
    package func prepare(remote: SocketAddress?, local: SocketAddress?) -> Preparation {
        guard let remote, let local, let ends = Self.ends(remote: remote, local: local) else {
            return .decided(.unknown(reason: "the connection's addresses are not known"))
        }
        guard Self.isAvailable || lookup != .kernel else { return .decided(.admitted(uid: nil)) }
        // Every peer is looked up, not only loopback ones: a local user who connects to one of the machine's other
        // addresses (a listener on 0.0.0.0) is just as local.
        switch lookup {
        case .fixed(let uid): return .decided(decide(ends, owner: .success(uid)))
        case .failing: return .decided(decide(ends, owner: .failure(.other("the lookup was made to fail"))))
        case .procTables(let tcp, let tcp6): return .readTable(ProcNetTCP(tcp: tcp, tcp6: tcp6), ends)
        case .kernel:
            #if canImport(Glibc)
                switch SocketDiagnostics.owner(of: ends) {
                case .success(let uid): return .decided(decide(peer: uid))
                case .failure(.unsupported): return .readTable(.kernel, ends)
                case .failure(let failure): return .decided(decide(ends, owner: .failure(LookupFailure(failure))))
                }
            #else
                return .decided(.unknown(reason: "this platform cannot tell who owns a socket"))
            #endif
        }
    }

    /// The decision for a peer at `ends` whose socket the lookup found to be `owner`'s, or found none for.
    func decide(_ ends: SocketEnds, owner: Result<UInt32, LookupFailure>) -> Decision {
        switch owner {
        case .success(let uid): return decide(peer: uid)
        // The kernel holds no socket for a peer on another machine; that peer is admitted here and the client key
        // guards it. A loopback peer is always on this machine: finding none for it is a failed lookup.
        case .failure(.notLocal) where !ends.isLoopback: return .admitted(uid: nil)
        case .failure(.notLocal): return .unknown(reason: "the kernel holds no socket for this loopback peer")
        case .failure(.other(let reason)): return .unknown(reason: reason)
        }
    }

    /// The rule itself, a function of this policy's users and the peer's uid alone: the owner and `allowUsers`
    /// are admitted, anyone else — root included — is refused.
    func decide(peer uid: UInt32) -> Decision {
        allowed.contains(uid) ? .admitted(uid: uid) : .refused(uid: uid)
    }

    /// The decision for a connection accepted on a Unix-domain socket, whose peer the kernel named when asked
    /// (`SO_PEERCRED`, unix(7)): `peer` is its uid, or why it could not be had. No "not local" here: a socket
    /// file's peer is always on this machine.
    func decide(unixPeer peer: Result<UInt32, PeerCredentials.Failure>) -> Decision {
        // Where the check is unavailable the socket file's mode (0600) is the only guard, as the docs say.
        guard Self.isAvailable || lookup != .kernel else { return .admitted(uid: nil) }
        switch (lookup, peer) {
        case (.fixed(let fixed), _): return decide(peer: fixed)
        case (.failing, _): return .unknown(reason: "the lookup was made to fail")
        case (.kernel, .success(let peer)), (.procTables, .success(let peer)): return decide(peer: peer)
        case (.kernel, .failure(let failure)), (.procTables, .failure(let failure)):
            return .unknown(reason: "\(failure)")
        }
    }

    /// Why no owner was found.
    enum LookupFailure: Error, Equatable, Sendable {
        /// The kernel holds no socket for the peer: it is on another machine.
        case notLocal
        case other(String)

        #if canImport(Glibc)
            init(_ failure: SocketDiagnostics.Failure) {
                switch failure {
                case .notLocal: self = .notLocal
                case .failed(let reason): self = .other(reason)
                case .unsupported(let code): self = .other("no socket diagnostics here (errno \(code))")
                }
            }
        #endif
    }

    /// The kernel's view of the connection, for TCP over IPv4 or IPv6; nil for anything else.
    static func ends(remote: SocketAddress, local: SocketAddress) -> SocketEnds? {
        switch (remote, local) {
        case (.v4(let peer), .v4(let own)):
            return SocketEnds(
                family: .inet, peerAddress: bytes(of: peer.address.sin_addr),
                peerPort: UInt16(bigEndian: peer.address.sin_port),
                localAddress: bytes(of: own.address.sin_addr), localPort: UInt16(bigEndian: own.address.sin_port))
        case (.v6(let peer), .v6(let own)):
            return SocketEnds(
                family: .inet6, peerAddress: bytes(of: peer.address.sin6_addr),
                peerPort: UInt16(bigEndian: peer.address.sin6_port), localAddress: bytes(of: own.address.sin6_addr),
                localPort: UInt16(bigEndian: own.address.sin6_port))
        default:
            return nil
        }
    }

    private static func bytes<T>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }
}
