import Crypto
import NIOCore
import Synchronization

/// The deterministic pseudo-random byte stream behind every large test body.
///
/// Byte `i` of the stream is byte `i % 8` (little-endian) of `splitmix64(i / 8)`, so any slice can be generated
/// on its own, in any chunking, without materialising what comes before it. Both `FakeUpstream`'s `.download`
/// bodies and `TestBody.stream` uploads use this one stream, so `sha256(length:)` is the expected hash of either.
enum TestPattern {
    /// The size of the chunks the writers generate and write (a multiple of 8, so chunks stay word-aligned).
    static let chunkSize = 64 * 1024

    private static let digestCache = Mutex<[Int: String]>([:])

    /// The 64-bit word that supplies bytes `8 * index ..< 8 * index + 8` of the stream.
    @inline(__always)
    static func word(_ index: Int) -> UInt64 {
        var z = (UInt64(truncatingIfNeeded: index) &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fills `destination` with the stream's bytes starting at `offset`.
    static func fill(_ destination: UnsafeMutableRawBufferPointer, offset: Int) {
        let count = destination.count
        var i = 0
        // Unaligned head, byte by byte.
        while i < count, (offset + i) % 8 != 0 {
            let position = offset + i
            destination[i] = UInt8(truncatingIfNeeded: word(position / 8) >> (UInt64(position % 8) * 8))
            i += 1
        }
        // Aligned words.
        while count - i >= 8 {
            destination.storeBytes(of: word((offset + i) / 8).littleEndian, toByteOffset: i, as: UInt64.self)
            i += 8
        }
        // Tail.
        while i < count {
            let position = offset + i
            destination[i] = UInt8(truncatingIfNeeded: word(position / 8) >> (UInt64(position % 8) * 8))
            i += 1
        }
    }

    /// `count` bytes of the stream starting at `offset`, as an array (for small slices and assertions).
    static func bytes(offset: Int = 0, count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            fill(UnsafeMutableRawBufferPointer(buffer), offset: offset)
            initialised = count
        }
    }

    /// `count` bytes of the stream starting at `offset`, in a new `ByteBuffer`.
    static func buffer(offset: Int, count: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            fill(UnsafeMutableRawBufferPointer(rebasing: pointer[0..<count]), offset: offset)
            return count
        }
        return buffer
    }

    /// Lower-case hex SHA-256 of the first `length` bytes of the stream (computed in chunks, cached).
    static func sha256(length: Int) -> String {
        if let cached = digestCache.withLock({ $0[length] }) {
            return cached
        }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var offset = 0
        while offset < length {
            let count = min(chunkSize, length - offset)
            chunk.withUnsafeMutableBytes { pointer in
                let slice = UnsafeMutableRawBufferPointer(rebasing: pointer[0..<count])
                fill(slice, offset: offset)
                hasher.update(bufferPointer: UnsafeRawBufferPointer(slice))
            }
            offset += count
        }
        let digest = hex(hasher.finalize())
        digestCache.withLock { $0[length] = digest }
        return digest
    }

    /// Lower-case hex of a SHA-256 digest.
    static func hex(_ digest: SHA256.Digest) -> String {
        var text = ""
        text.reserveCapacity(SHA256.Digest.byteCount * 2)
        for byte in digest {
            text += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return text
    }

    /// Lower-case hex SHA-256 of `bytes`.
    static func sha256(of bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }
}
