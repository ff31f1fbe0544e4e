import NIOCore

/// Writes the pieces of a head — the client's bytes in runs, the proxy's own lines — into a `ByteBuffer` in one
/// write. Each `ByteBuffer` write checks that the buffer is uniquely owned, makes room, and moves its indices: a
/// head of two dozen pieces pays that two dozen times, about 3 % of a proxied request's CPU (docs/benchmarks.md). Here
/// room is made once, for a bound the caller gives, and each piece is copied after checking that it fits.
///
/// A piece that does not fit is not written and marks the head ``overflowed``: ``ByteBuffer/writeHead(bound:_:)``
/// then throws that try away and writes the head again with more room. A bound too small costs speed, never bytes.
package struct HeadBytes: ~Copyable {
    // Inlinable, so each piece is a bounds check and a copy in the writer's own code rather than a call into this
    // module (what it was first: 1.3 % of a request's CPU in calls).
    @usableFromInline let room: UnsafeMutableRawBufferPointer
    @usableFromInline var written = 0
    @usableFromInline var failed = false

    /// Bytes written so far.
    @inlinable package var count: Int { written }
    /// A piece did not fit: what was written is incomplete and must be thrown away.
    @inlinable var overflowed: Bool { failed }

    @inlinable init(room: UnsafeMutableRawBufferPointer) {
        self.room = room
    }

    /// Copies `source`'s bytes, or marks the head overflowed when they do not fit in what is left.
    @inlinable @inline(__always) mutating func append(_ source: UnsafeRawBufferPointer) {
        guard !failed else { return }
        // Checked in every build: the copy below writes only inside `room`.
        guard source.count <= room.count - written else {
            failed = true
            return
        }
        if source.isEmpty { return }
        UnsafeMutableRawBufferPointer(rebasing: room[written..<written + source.count]).copyMemory(from: source)
        written += source.count
    }

    @inlinable @inline(__always) package mutating func append(_ bytes: Span<UInt8>) {
        bytes.withUnsafeBytes { append($0) }
    }

    @inlinable @inline(__always) package mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inlinable @inline(__always) package mutating func append(contentsOf text: String) {
        append(utf8: text.utf8)
    }

    @inlinable @inline(__always) package mutating func append(contentsOf text: Substring) {
        append(utf8: text.utf8)
    }

    /// A string's bytes where they lie (every native string's are contiguous), else one at a time.
    @inlinable @inline(__always) mutating func append(utf8: some Collection<UInt8>) {
        let copied: Void? = utf8.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            for byte in utf8 { append(byte) }
        }
    }

    @inlinable @inline(__always) package mutating func append(_ byte: UInt8) {
        withUnsafeBytes(of: byte) { append($0) }
    }
}

extension ByteBuffer {
    /// Writes the head that `write` makes, in one write that reserves `bound` bytes, or — when a piece does not fit
    /// in `bound` — as many more as it takes: `write` runs again with twice the room until it fits (nothing of a try
    /// that overflowed is kept). The bound is the caller's estimate; too small costs a second pass, never bytes.
    package mutating func writeHead(bound: Int, _ write: (inout HeadBytes) -> Void) {
        var bound = max(bound, 64)
        while !tryWriteHead(bound: bound, write) { bound *= 2 }
    }

    private mutating func tryWriteHead(bound: Int, _ write: (inout HeadBytes) -> Void) -> Bool {
        var written = true
        writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { room in
            var head = HeadBytes(room: room)
            write(&head)
            written = !head.overflowed
            return written ? head.count : 0
        }
        return written
    }
}
