import NIOCore

/// What the proxy writes to the client, in one place: framed (``MessageFramer``), and a response head with the small
/// body that follows it as one write.
///
/// Each write costs a pass through the pipeline to the socket's queue — a few dozen retains and releases (#24
/// session 18, bench/counts.sh) — while copying a body of a few hundred bytes costs next to nothing. So a response
/// head whose body goes as it is (Content-Length, or the close) is held back, the body parts that follow are appended
/// to it while head and body together stay within ``coalescedLimit`` bytes, and it goes down the pipeline at the
/// first of: a part that does not fit, the response's end, any other write, or the end of the upstream's read
/// (``upstreamReadComplete(_:)`` flushes). Nothing is held past that read, so no byte waits for more; a part that does
/// not fit is written as it is, never copied; and what is held never exceeds the limit, however many small parts a
/// hostile upstream sends (a chunked body relayed to an HTTP/1.0 client comes as one part per chunk).
extension ProxyConnectionHandler {
    /// The most a held head and the body parts appended to it come to: the size of a head buffer that is kept for
    /// reuse (``ReusedHeadBuffer/largestKept``), so that coalescing never costs the next head an allocation.
    static let coalescedLimit = ReusedHeadBuffer.largestKept

    /// Writes `part` to the client, framed (``MessageFramer``), and flushes when asked.
    package func write(_ part: MessagePart, promise: EventLoopPromise<Void>?, flush: Bool = false) {
        if heldResponseHead != nil {
            if case .body(let body) = part, promise == nil, !flush, appendToHeldHead(body) { return }
            writeHeldResponseHead()
        }
        framer.write(part, from: context, promise: promise)
        if flush { context.flush() }
    }

    /// Keeps `bytes`, a response head whose body is not chunked, until a write that cannot join it.
    func holdResponseHead(_ bytes: ByteBuffer) {
        writeHeldResponseHead()
        heldResponseHead = bytes
    }

    /// Writes the held response head (and what was appended to it), if there is one; its buffer is reused for the
    /// next head once the socket lets go of it (``ReusedHeadBuffer``).
    func writeHeldResponseHead() {
        guard let held = heldResponseHead.take() else { return }
        responseHeads.keep(held)
        framer.write(.head(held, chunked: false), from: context, promise: nil)
    }

    /// Appends `body` to the held head, if both fit within ``coalescedLimit``; whether it did.
    private func appendToHeldHead(_ body: ByteBuffer) -> Bool {
        guard let length = heldResponseHead?.readableBytes, length + body.readableBytes <= Self.coalescedLimit,
            var held = heldResponseHead.take()
        else { return false }
        // Taken out first, so the buffer is not shared and grows in place.
        held.writeImmutableBuffer(body)
        heldResponseHead = held
        return true
    }
}
