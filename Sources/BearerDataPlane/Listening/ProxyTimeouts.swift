import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore

// A file of its own although short: the public value the `serve` command fills in from its options.

/// The data plane's time limits (SPEC §8). `serve` sets the client-side ones from its options.
public struct ProxyTimeouts: Sendable, Hashable {
    /// From the first byte of a request head to its end: a client trickling header bytes holds its connection no
    /// longer than this (slowloris). Answered `408`, then closed.
    public var requestHead: TimeAmount = .seconds(10)
    /// How long a request body may stop flowing while the proxy is ready to read it. Answered `408` if no
    /// response has started, else the connection is closed. The same limit bounds an upstream that takes none of
    /// the body while the proxy holds it back for that upstream: `504`, or the connection closed.
    public var bodyStall: TimeAmount = .seconds(60)
    /// Establishing a TCP (and TLS) connection to an upstream; a refused connect fails at once regardless.
    var connect: TimeAmount = .seconds(5)
    /// From the last request byte sent upstream to the response head (like Go's `ResponseHeaderTimeout`);
    /// a route's `timeoutSeconds` overrides it. It also bounds the wait for the route's token.
    var responseHead: TimeAmount = .seconds(60)
    /// How long an idle client keep-alive connection stays open.
    public var clientIdle: TimeAmount = .seconds(60)
    /// How long an idle pooled upstream connection is kept.
    var upstreamIdle: TimeAmount = .seconds(30)
    /// On shutdown, how long in-flight requests may take to finish before the process exits anyway.
    package var shutdownGrace: TimeAmount = .seconds(10)

    public init() {}
}
