import Logging
import Metrics
import NIOCore

/// Applies the generation's ``PeerUserPolicy`` to each accepted connection, before its pipeline is built: a refused
/// connection is closed with nothing of it read, so no request of it can reach a token or an upstream (#26).
struct PeerUserCheck: Sendable {
    let generations: any GenerationSource
    let logger: Logger
    let refusedUser: Metrics.Counter
    let refusedUnknown: Metrics.Counter

    /// Whether `channel` may be served; when not, the reason is counted and logged.
    func admits(_ channel: any Channel) -> Bool {
        guard let policy = generations.peerUsers else { return true }
        switch policy.decide(remote: channel.remoteAddress, local: channel.localAddress) {
        case .admitted:
            return true
        case .refused(let uid):
            refusedUser.increment()
            logger.warning(
                "closed a connection from uid \(uid): not this proxy's user and not in \"allowUsers\"",
                metadata: ["peer": "\(channel.remoteAddress.map { "\($0)" } ?? "?")"])
            return false
        case .unknown(let reason):
            refusedUnknown.increment()
            logger.error(
                "closed a connection: cannot tell which user it comes from (\(reason)); refusing is the safe side",
                metadata: ["peer": "\(channel.remoteAddress.map { "\($0)" } ?? "?")"])
            return false
        }
    }
}
