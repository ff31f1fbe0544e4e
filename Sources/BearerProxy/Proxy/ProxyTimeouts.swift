import NIOCore

/// The data plane's time limits. Defaults follow SPEC §8 and the issue: connect 5 s, response head 60 s.
public struct ProxyTimeouts: Sendable, Hashable {
    /// Establishing a TCP (and TLS) connection to an upstream; a refused connect fails at once regardless.
    public var connect: TimeAmount = .seconds(5)
    /// From the last request byte sent upstream to the response head (like Go's `ResponseHeaderTimeout`);
    /// a route's `timeoutSeconds` overrides it.
    public var responseHead: TimeAmount = .seconds(60)
    /// How long an idle client keep-alive connection stays open.
    public var clientIdle: TimeAmount = .seconds(60)
    /// How long an idle pooled upstream connection is kept.
    public var upstreamIdle: TimeAmount = .seconds(30)
    /// On shutdown, how long in-flight requests may take to finish before the process exits anyway.
    public var shutdownGrace: TimeAmount = .seconds(10)

    public init() {}
}
