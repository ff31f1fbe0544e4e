import BearerCodec
import BearerConfiguration
import BearerHTTP
import NIOCore
import NIOHTTP1

/// An upstream connection as the exchange using it sees it (docs/architecture.md): one request at a time, written as
/// parts, its response delivered to the ``UpstreamConnectionOwner``. HTTP/1.1's is a connection (``UpstreamHandler``);
/// HTTP/2's is one stream of a shared connection (``HTTP2UpstreamStream``); each has its connector, and neither is
/// known to the client connection's handler. The replay rule's transport half is the transport's: it says, when the connection
/// fails before an answer, whether the request provably reached no application (``UpstreamConnectionOwner``).
protocol UpstreamConnection: AnyObject {
    /// `owner`'s exchange takes the connection: whether it may (a connection serves one exchange at a time).
    func lease(to owner: any UpstreamConnectionOwner) -> Bool
    /// Whether it can take more request bytes now (backpressure).
    var isWritable: Bool { get }
    /// Writes the request's head, the body that has arrived with it, and its end when it has. One call for the
    /// request's start, so the transport reaches its channel once (per request, each call through this protocol
    /// costs a retain of the channel's context that inlining used to merge: bench/counts.sh).
    ///
    /// Nothing written here is sent before ``flush()``: the owner flushes once for all it wrote in one event (a
    /// client's read brings a GET's head and its end together).
    func send(_ head: UpstreamRequestHead, body: [ByteBuffer], end: Bool)
    /// Writes a part of the request's body.
    func write(_ body: ByteBuffer)
    /// Writes the request's end.
    func end()
    /// Sends what was written.
    func flush()
    /// Stops delivering response parts until ``resumeReads()`` (the client is not draining them).
    func pauseReads()
    func resumeReads()
    /// The exchange is done with it: kept by its connector for the next exchange to the same origin when `reuse`
    /// (both messages on it are complete), else closed.
    func release(reuse: Bool, now: NIODeadline)
    func close()
}

/// The receiving side of an exchange's upstream connection; implemented by ``ProxyConnectionHandler``.
protocol UpstreamConnectionOwner: AnyObject {
    /// The connection is about to hand over the parts it read from one read of its bytes: `deliver` hands them, each
    /// by ``upstream(_:received:)``. One event for the owner, however many parts (a head and its end), so that it
    /// reads the time once for them (``EventClock``).
    func upstreamReading(_ upstream: any UpstreamConnection, _ deliver: () -> Void)
    func upstream(_ upstream: any UpstreamConnection, received part: UpstreamResponsePart)
    func upstreamReadComplete(_ upstream: any UpstreamConnection)
    func upstreamWritabilityChanged(_ upstream: any UpstreamConnection)
    /// The connection closed while the exchange had it. `neverProcessed`: the transport's word that the request
    /// reached no application — for HTTP/1.1, a pooled connection the upstream closed before any byte of an answer
    /// (SPEC §8; RFC 9112 §9.3.1); for HTTP/2, a stream refused with REFUSED_STREAM or above a GOAWAY's last stream
    /// (RFC 9113 §8.7, §6.8) — so the exchange may send it again if it may repeat it at all.
    func upstreamClosed(_ upstream: any UpstreamConnection, error: (any Error)?, neverProcessed: Bool)
}

/// Gets upstream connections for exchanges on one event loop: an idle one it kept, or a new one (SPEC §3: on the
/// client connection's own loop, no hops).
protocol UpstreamConnector: AnyObject {
    /// An idle connection to `origin` kept from an earlier exchange, if there is one — at once, allocating nothing.
    func pooled(_ origin: UpstreamOrigin) -> (any UpstreamConnection)?
    /// Opens a new connection to `origin` on `eventLoop` (this connector's), within `timeout`; `completion` runs on
    /// that loop.
    func connect(
        _ origin: UpstreamOrigin, timeout: TimeAmount, on eventLoop: any EventLoop,
        completion: @escaping (Result<any UpstreamConnection, any Error>) -> Void)
    /// Closes the kept connections idle for too long.
    func evictIdle(now: NIODeadline)
    /// Closes every kept connection (shutdown).
    func closeAll()
}

extension UpstreamConnectionOwner {
    func upstreamReading(_ upstream: any UpstreamConnection, _ deliver: () -> Void) { deliver() }
}
