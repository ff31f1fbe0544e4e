import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import Logging
import Metrics
import NIOCore
import NIOPosix

/// Applies the generation's ``PeerUserPolicy`` to each accepted connection, before its pipeline is built: a refused
/// connection is closed with nothing of it read, so no request of it can reach a token or an upstream (SPEC §9).
///
/// Every refusal is counted; the log says so once a minute per user (and per failure) at most, with how many were
/// refused since the last line: another user looping on connect must not be able to fill the owner's disk with log
/// lines.
package struct PeerUserCheck: Sendable {
    let generations: any GenerationSource
    package let logger: Logger
    let refusedUser: Metrics.Counter
    let refusedUnknown: Metrics.Counter
    private let logged = LogThrottle(interval: .seconds(60))

    init(
        generations: any GenerationSource, logger: Logger, refusedUser: Metrics.Counter,
        refusedUnknown: Metrics.Counter
    ) {
        self.generations = generations
        self.logger = logger
        self.refusedUser = refusedUser
        self.refusedUnknown = refusedUnknown
    }

    /// Whether `channel` may be served; when not, the reason is counted and logged. A Unix-domain connection asks
    /// the kernel for its peer's credentials first; a TCP one is decided at once, unless its owner must be read
    /// from `/proc/net/tcp`.
    ///
    /// That read runs on NIO's blocking-I/O pool, never on the event loop: with a busy host's table it takes
    /// milliseconds, and the loop serves every other connection meanwhile. The connection waits for the verdict
    /// unread — the bootstrap registers it for reads only once this future completes.
    func admits(_ channel: any Channel) -> EventLoopFuture<Bool> {
        guard let policy = generations.peerUsers else { return channel.eventLoop.makeSucceededFuture(true) }
        if case .unixDomainSocket = channel.localAddress {
            return PeerCredentials.uid(of: channel).map { peer in
                judge(policy.decide(unixPeer: peer), channel: channel)
            }
        }
        switch policy.prepare(remote: channel.remoteAddress, local: channel.localAddress) {
        case .decided(let decision):
            return channel.eventLoop.makeSucceededFuture(judge(decision, channel: channel))
        case .readTable(let table, let ends):
            return NIOThreadPool.singleton.runIfActive(eventLoop: channel.eventLoop) { table.owner(of: ends) }
                .recover { .failure(.other("the socket table was not read: \($0)")) }
                .map { judge(policy.decide(ends, owner: $0), channel: channel) }
        }
    }

    private func judge(_ decision: PeerUserPolicy.Decision, channel: any Channel) -> Bool {
        switch decision {
        case .admitted:
            return true
        case .refused(let uid):
            refusedUser.increment()
            if let count = logged.due("uid \(uid)") {
                logger.warning(
                    "closed a connection from uid \(uid): not this proxy's user and not in \"allowUsers\"",
                    metadata: ["peer": "\(Self.peer(of: channel))", "refused": "\(count)"])
            }
            return false
        case .unknown(let reason):
            refusedUnknown.increment()
            if let count = logged.due(reason) {
                logger.error(
                    "closed a connection: cannot tell which user it comes from (\(reason)); refusing is the safe side",
                    metadata: ["peer": "\(Self.peer(of: channel))", "refused": "\(count)"])
            }
            return false
        }
    }

    /// The peer as the log names it: its address, or the socket file it came through.
    private static func peer(of channel: any Channel) -> String {
        if case .unixDomainSocket = channel.localAddress, let path = channel.localAddress?.pathname {
            return "unix:\(path)"
        }
        return channel.remoteAddress.map { "\($0)" } ?? "?"
    }
}
