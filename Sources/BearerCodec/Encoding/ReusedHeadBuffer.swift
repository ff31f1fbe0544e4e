import NIOCore

/// The buffer a connection writes each of its message heads into, kept between messages so that a head costs no
/// allocation (two of the twelve `malloc`s a request would otherwise cost, each way — bench/counts.sh).
///
/// A head written into it goes down the pipeline as a copy of the same storage; by the next message the socket has
/// taken those bytes and let go of it, so the storage is uniquely this one's again and `clear(minimumCapacity:)`
/// reuses it. When a write is still pending (the peer reads slowly), `clear` finds the storage shared and allocates
/// a fresh one: the pending bytes are never overwritten.
package struct ReusedHeadBuffer {
    /// A buffer grown beyond this (a head near the limits) is not kept: an idle connection holds at most this much.
    package static let largestKept = 4096

    private var kept: ByteBuffer?

    package init() {}

    /// Runs `write` with the kept buffer — moved out, so that nothing else holds it — and keeps it afterwards.
    /// `write` empties it first (`clear(minimumCapacity:)`), knowing how much room the head needs.
    package mutating func writing<Result>(_ write: (inout ByteBuffer) throws -> Result) rethrows -> Result {
        var buffer = take()
        defer { keep(buffer) }
        return try write(&buffer)
    }

    /// The kept buffer, moved out (nothing else holds it: written to, it is not copied), or a new one; the caller
    /// empties it first and gives it back with ``keep(_:)``.
    package mutating func take() -> ByteBuffer {
        kept.take() ?? ByteBuffer()
    }

    /// Keeps `buffer` for the next head, unless it grew beyond ``largestKept``.
    package mutating func keep(_ buffer: ByteBuffer) {
        if buffer.capacity <= Self.largestKept { kept = buffer }
    }
}
