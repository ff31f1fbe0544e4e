import BearerCodec
import NIOCore

/// What the proxy writes to the client, in one place: framed (``MessageFramer``), and a response head with the small
/// body that follows it as one write.
///
/// Each write costs a pass through the pipeline to the socket's queue — a few dozen retains and releases
/// (bench/counts.sh) — while copying a body of a few hundred bytes costs next to nothing. So a response head whose body
/// goes as it is (Content-Length, or the close) is held back, the body parts that follow are appended to it while head
/// and body together stay within ``coalescedLimit`` bytes, and it goes down the pipeline at the first of: a part that
/// does not fit, the response's end, any other write, or the end of the upstream's read (the handler writes what is
/// held then). Nothing is held past that read, so no byte waits for more; a part that does not fit is written as it
/// is, never copied; and what is held never exceeds the limit, however many small parts a hostile upstream sends (a
/// chunked body relayed to an HTTP/1.0 client comes as one part per chunk).
struct ClientWriter {
    /// The most a held head and the body parts appended to it come to: the size of a head buffer that is kept for
    /// reuse (``ReusedHeadBuffer/largestKept``), so that coalescing never costs the next head an allocation.
    static let coalescedLimit = ReusedHeadBuffer.largestKept

    private var framer = MessageFramer()
    /// The buffers the response heads are written into, reused from one exchange to the next.
    private var heads = ReusedHeadBuffer()
    /// A response head not yet written down the pipeline, and the small body parts appended to it since.
    private var held: ByteBuffer?

    /// Whether a response head is held back, not yet written down the pipeline.
    var holdsHead: Bool { held != nil }

    /// A buffer to write the next response head into (a reused one when the socket has let go of it).
    mutating func headBuffer() -> ByteBuffer {
        heads.take()
    }

    /// Writes `part` from `context`, framed, and flushes when asked. A small body part joins a held head instead.
    mutating func write(
        _ part: MessagePart, from context: ChannelHandlerContext, promise: EventLoopPromise<Void>?, flush: Bool = false
    ) {
        if held != nil {
            if case .body(let body) = part, promise == nil, !flush, appendToHeld(body) { return }
            writeHeld(from: context)
        }
        framer.write(part, from: context, promise: promise)
        if flush { context.flush() }
    }

    /// Writes the response head `bytes`: as it is when its body goes in chunks, else held until a write that cannot
    /// join it.
    mutating func writeHead(_ bytes: ByteBuffer, chunked: Bool, from context: ChannelHandlerContext) {
        if chunked {
            heads.keep(bytes)
            write(.head(bytes, chunked: true), from: context, promise: nil)
        } else {
            writeHeld(from: context)
            held = bytes
        }
    }

    /// Writes the held response head (and what was appended to it), if there is one; its buffer is reused for the
    /// next head once the socket lets go of it (``ReusedHeadBuffer``).
    mutating func writeHeld(from context: ChannelHandlerContext) {
        guard let bytes = held.take() else { return }
        heads.keep(bytes)
        framer.write(.head(bytes, chunked: false), from: context, promise: nil)
    }

    /// Appends `body` to the held head, if both fit within ``coalescedLimit``; whether it did.
    private mutating func appendToHeld(_ body: ByteBuffer) -> Bool {
        guard let length = held?.readableBytes, length + body.readableBytes <= Self.coalescedLimit,
            var bytes = held.take()
        else { return false }
        // Taken out first, so the buffer is not shared and grows in place.
        bytes.writeImmutableBuffer(body)
        held = bytes
        return true
    }
}
