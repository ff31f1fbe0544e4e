import BearerTelemetry
import NIOCore
import NIOHTTP2

/// The streams of one HTTP/2 client connection, served on the connection's own pipeline: the last handler, after
/// NIOHTTP2's (which frames, decodes HPACK and keeps each stream's state, SPEC §3), it hands each stream's frames to
/// its ``HTTP2ClientStream`` and writes their frames back.
///
/// What NIOHTTP2's multiplexer did — a child channel and a pipeline for every stream — cost about a quarter of an
/// HTTP/2 request's CPU (docs/benchmarks.md, the HTTP/2 floor); what it did besides is done here: a stream begins with
/// its first HEADERS frame, the connection's window is given back as its DATA arrives (``HTTP2InboundWindow``) and
/// each stream's as its exchange takes the data, the connection's writability and the server's quiescing reach every
/// stream, and flushes asked for during a read wait for the read's end.
final class HTTP2StreamTable: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The window each stream, and the connection, gives its client: NIOHTTP2's default (RFC 9113 §6.9.2's initial
    /// size).
    static let windowTarget = 65535

    private let core: ProxyServerCore
    private let loop: EventLoopState
    private var context: ChannelHandlerContext?
    private(set) var streams: [HTTP2StreamID: HTTP2ClientStream] = [:]
    /// The highest stream begun: a HEADERS frame for a lower one is for a stream that has ended here.
    private var lastStreamID = HTTP2StreamID.rootStream
    /// The client's IP address, read once for all the connection's streams (nil on the Unix socket).
    private var clientAddress: String?
    private var connectionWindow = HTTP2InboundWindow(target: HTTP2StreamTable.windowTarget)
    /// Streams that received frames in the current read, and the array that takes its place as they are told.
    private var readers: [HTTP2ClientStream] = []
    private var spareReaders: [HTTP2ClientStream] = []
    private var inRead = false
    private var flushAfterRead = false
    /// The connection's one timer, for every stream's time limits: it fires at the earliest deadline any stream's
    /// handler asked for, and each handler whose deadline has come checks its limits (``ConnectionTimer``).
    private var timer: Scheduled<Void>?
    private var timerFiresAt = NIODeadline.distantFuture
    private var timerFiring = false

    init(core: ProxyServerCore, loop: EventLoopState) {
        self.core = core
        self.loop = loop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        clientAddress = context.channel.remoteAddress?.ipAddress
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        endAll()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        inRead = true
        if let stream = streams[id] {
            stream.received(frame.payload)
            readers.append(stream)
        } else if case .headers = frame.payload, id > lastStreamID {
            lastStreamID = id
            let stream = HTTP2ClientStream(
                id: id, table: self, metrics: core.metrics, eventLoop: context.eventLoop,
                windowTarget: Self.windowTarget, connectionWritable: context.channel.isWritable)
            streams[id] = stream
            stream.start(ProxyConnectionHandler(server: core, loop: loop, stream: stream), clientAddress: clientAddress)
            stream.received(frame.payload)
            readers.append(stream)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inRead = false
        if !readers.isEmpty {
            // Swapped, not copied: a copy of an array that is then emptied allocates.
            swap(&readers, &spareReaders)
            for stream in spareReaders { stream.readComplete() }
            spareReaders.removeAll(keepingCapacity: true)
        }
        if flushAfterRead {
            flushAfterRead = false
            context.flush()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as NIOHTTP2WindowUpdatedEvent:
            guard let size = event.inboundWindowSize else { return }
            if event.streamID == .rootStream {
                guard let increment = connectionWindow.sizeChanged(to: size) else { return }
                write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment)))
                flush()
            } else {
                streams[event.streamID]?.windowChanged(to: size)
            }
        case let event as StreamClosedEvent:
            streams.removeValue(forKey: event.streamID)?.connectionClosed()
        case is ChannelShouldQuiesceEvent:
            for stream in Array(streams.values) { stream.quiesce() }
        default:
            break
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        for stream in Array(streams.values) { stream.connectionWritabilityChanged(writable) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        endAll()
    }

    private func endAll() {
        let ended = streams.values
        streams.removeAll()
        readers.removeAll()
        for stream in ended { stream.connectionClosed() }
    }

    /// A stream's handler wants its timer to fire at `deadline`: the connection's fires no later. One armed earlier
    /// stays: when it fires, the handlers whose deadline has not come wait for the next.
    func timerWanted(at deadline: NIODeadline) {
        guard deadline < timerFiresAt else { return }
        timerFiresAt = deadline
        guard !timerFiring, let context else { return }
        timer?.cancel()
        // Captured strongly: the task is cancelled as the handler leaves the pipeline.
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.timerFired() }
    }

    private func timerFired() {
        timer = nil
        timerFiresAt = .distantFuture
        guard let context else { return }
        let now = context.eventLoop.now
        timerFiring = true
        var next = NIODeadline.distantFuture
        for stream in Array(streams.values) { next = min(next, stream.timerReached(now)) }
        timerFiring = false
        let wanted = min(next, timerFiresAt)
        timerFiresAt = .distantFuture
        if wanted < .distantFuture { timerWanted(at: wanted) }
    }

    /// The stream's handler has let go of it.
    func remove(_ stream: HTTP2ClientStream) {
        if streams[stream.id] === stream { streams.removeValue(forKey: stream.id) }
    }

    /// Writes `frame` to the connection; its promise fails once the connection has gone.
    func write(_ frame: HTTP2Frame, promise: EventLoopPromise<Void>? = nil) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    /// Flushes the connection, at the end of the read in progress if there is one: the frames of all the streams that
    /// answered in it go together.
    func flush() {
        if inRead {
            flushAfterRead = true
        } else {
            context?.flush()
        }
    }
}
