import BearerCodec
import BearerConfiguration
import BearerHTTP
import BearerJSON
import BearerTelemetry
import BearerTokens
import NIOCore
import NIOHTTP1

/// HTTP/1.1's ``UpstreamConnection``, the one handler of its pipeline above TLS (``HTTP1Connector`` builds it): frames
/// the exchange's request (``MessageFramer``), reads the upstream's bytes into response parts (``ResponseDecoder``,
/// inline: no parts cross the pipeline in a `NIOAny`; docs/benchmarks.md), hands them to the exchange that owns the
/// connection and applies backpressure by withholding `read()` while the downstream client cannot keep up. Its life —
/// leased, pooled, closed, and the facts that decide a replay — is ``UpstreamConnectionStateMachine``'s; this class
/// holds the I/O handles and performs what the machine decides.
final class UpstreamHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamConnection {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let origin: UpstreamOrigin
    /// The exchange using this connection (an I/O handle: the machine says whether it is leased). Strong, and let go
    /// whenever the exchange lets go of the connection — ``release(reuse:now:)``, ``detach()``, ``close()``, the
    /// connection's end — and the client's connection closes the one it holds when it ends: a weak reference would give
    /// the owner's object a side table, so that every retain and release of it would take the runtime's slow path
    /// (perf, bench/counts.sh).
    private(set) var owner: (any UpstreamConnectionOwner)?
    /// Where it waits between exchanges (its connector's, on its loop, which lives as long as the loop). Strong for
    /// the same reason; ``UpstreamPool/closeAll()`` lets go of the idle ones.
    var pool: UpstreamPool?
    private(set) var machine = UpstreamConnectionStateMachine()

    private var context: ChannelHandlerContext?
    private var readsPaused = false
    private var reads = ReadGate()
    private var framer = MessageFramer()
    private var decoder = ResponseDecoder()
    /// The decoder is running: bytes that arrive meanwhile are decoded by the run in progress.
    private var decoding = false
    /// The decoder refused the upstream's bytes, or the connection closed: nothing more is decoded.
    private var decoderStopped = false
    /// The last read of the socket filled its buffer: NIO reads again, and bytes may be waiting in the socket — in
    /// the clear only; TLS hands over what it decrypted in buffers of its own.
    private var readFilledItsBuffer = false
    /// No TLS between the socket and this handler: its reads are the socket's.
    private let inTheClear: Bool

    init(origin: UpstreamOrigin) {
        self.origin = origin
        if case .plain = origin.transport { inTheClear = true } else { inTheClear = false }
    }

    /// `owner`'s exchange takes the connection: whether it may (it is new, or was waiting in the pool).
    func lease(to owner: any UpstreamConnectionOwner) -> Bool {
        guard machine.lease() else { return false }
        self.owner = owner
        return true
    }

    /// The exchange lets go of it without closing it: the WebSocket tunnel takes its channel over.
    func detach() {
        owner = nil
    }

    package func release(reuse: Bool, now: NIODeadline) {
        owner = nil
        guard reuse, let pool else { return close() }
        if decoding {
            // Released as the answer's end is handed over, inside a read: bytes after it in this read are held by the
            // decoder — nobody asked for them, so the connection ends. In the clear, a read that filled its buffer
            // is followed by another in the same batch (NIO reads until one does not), whose bytes are known only
            // when the read completes (``channelReadComplete(context:)``): until then no other exchange can take
            // it. Otherwise the read emptied the socket (through TLS, NIOSSL hands over all it decrypted from the
            // batch's reads in one read), and a pipelined request may take the connection at once.
            if decoder.holdsUnreadBytes() { return close() }
            if readFilledItsBuffer {
                if !machine.release(now: now) { close() }
                return
            }
        }
        pool.park(self, now: now)
    }

    /// Hands the bytes the decoder holds unread — after a `101`, the new protocol's first — to the handler after
    /// this one: the tunnel's end, before this handler leaves.
    func forwardUndecodedBytes() {
        guard let context, let bytes = decoder.takeUndecodedBytes() else { return }
        context.fireChannelRead(NIOAny(bytes))
    }

    /// The pool's sweep: closes the connection if it has been idle for `limit`; whether it did.
    func closeIfIdle(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard machine.idleTooLong(now: now, limit: limit) else { return false }
        close()
        return true
    }

    var channel: (any Channel)? { context?.channel }
    /// Whether the channel is active and writable, as its events said (NIO changes both only just before it tells
    /// the pipeline, and calls no code of ours in between: nothing written upstream carries a promise). Asked on
    /// every request — the pool's checks, each read the client's handler lets through — where asking the channel
    /// cost a retain and a release of it each time (bench/counts.sh).
    private(set) var isActive = false
    private(set) var isWritable = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isActive = context.channel.isActive
        isWritable = context.channel.isWritable
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        isActive = false
        isWritable = false
    }

    func channelActive(context: ChannelHandlerContext) {
        isActive = true
        isWritable = context.channel.isWritable
        context.fireChannelActive()
    }

    func send(_ head: UpstreamRequestHead, body: [ByteBuffer], end: Bool) {
        guard let context else { return }
        decoder.requestSent(head)
        framer.write(.head(head.bytes, chunked: head.chunked), from: context, promise: nil)
        for part in body { framer.write(.body(part), from: context, promise: nil) }
        if end { framer.write(.end(trailers: nil), from: context, promise: nil) }
    }

    package func write(_ body: ByteBuffer) {
        guard let context else { return }
        framer.write(.body(body), from: context, promise: nil)
    }

    func end() {
        guard let context else { return }
        framer.write(.end(trailers: nil), from: context, promise: nil)
    }

    package func flush() { context?.flush() }

    func close() {
        machine.close()
        owner = nil
        context?.close(promise: nil)
    }

    /// Stops reading from the upstream until ``resumeReads()`` (the client is not draining what we send it).
    func pauseReads() { readsPaused = true }

    /// Makes the connection ready for the next exchange as it goes into the pool at `now`, or says it cannot be
    /// (closed, or still leased). Reads resume: a response large enough to pause them toward a slow client may end
    /// while they are paused, and a connection pooled that way would send the next request and never read its
    /// answer. While pooled, any byte it sends closes it (the machine), so nothing stays buffered or half-read.
    func prepareForReuse(now: NIODeadline) -> Bool {
        guard isActive, owner == nil, machine.park(now: now) else { return false }
        resumeReads()
        return true
    }

    func resumeReads() {
        guard readsPaused else { return }
        readsPaused = false
        if let context, reads.release(open: true) { context.read() }
    }

    func read(context: ChannelHandlerContext) {
        if reads.admit(open: !readsPaused) { context.read() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Every byte counts, parsed or not: an unparseable answer, half a head or a reset mid-response all mean the
        // upstream may have acted on the request, so it must not be replayed (SPEC §8).
        if machine.responseBytes() == .close { return close() }
        guard owner != nil else {
            // An idle pooled connection has nothing to say; anything it sends would corrupt the next exchange.
            context.close(promise: nil)
            return
        }
        if decoderStopped { return }
        let bytes = unwrapInboundIn(data)
        if inTheClear { readFilledItsBuffer = bytes.writableBytes == 0 }
        decoder.append(bytes)
        decode(seenEOF: false)
    }

    /// Runs the decoder until it needs more bytes, handing each part to the exchange; `seenEOF` once the connection
    /// has closed. A refusal is the connection's failure, as the exchange hears it (``perform(_:error:)``).
    private func decode(seenEOF: Bool) {
        guard !decoding, !decoderStopped else { return }
        decoding = true
        defer { decoding = false }
        guard let reader = owner else { return }
        reader.upstreamReading(self) {
            do {
                // Only while leased: once the exchange lets go, the bytes left are nobody's answer, and the read's
                // completion decides what becomes of the connection (``UpstreamConnectionStateMachine``).
                while let owner, let part = try decoder.next(seenEOF: seenEOF) {
                    owner.upstream(self, received: part)
                    if decoderStopped { return }
                }
            } catch {
                decoderStopped = true
                perform(machine.closed(), error: error)
                context?.close(promise: nil)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .releasing = machine.state {
            perform(machine.readCompleted(overran: decoder.holdsUnreadBytes() || readFilledItsBuffer), error: nil)
        }
        owner?.upstreamReadComplete(self)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        owner?.upstreamWritabilityChanged(self)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        isWritable = false
        // A body delimited by the close ends here; a response cut short is refused as truncated.
        decode(seenEOF: true)
        decoderStopped = true
        perform(machine.closed(), error: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        perform(machine.closed(), error: error)
        context.close(promise: nil)
    }

    private func perform(_ action: UpstreamConnectionStateMachine.Action, error: (any Error)?) {
        switch action {
        case .none:
            break
        case .close:
            close()
        case .tellExchange(let reused, let answered):
            guard let owner else { return }
            self.owner = nil
            // HTTP/1.1's half of the replay rule: a connection the upstream kept idle and closed before a single
            // byte of an answer (RFC 9112 §9.3.1) never had the request processed.
            owner.upstreamClosed(self, error: error, neverProcessed: reused && !answered)
        case .leavePool:
            pool?.remove(self)
        case .joinPool(let since):
            guard let pool else { return close() }
            pool.park(self, now: since)
        }
    }
}
