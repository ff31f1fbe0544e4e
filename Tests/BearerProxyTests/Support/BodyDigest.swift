import Crypto
import NIOCore

/// Running length, SHA-256 and capped prefix of a body that is streamed, never buffered whole.
struct BodyDigest: Sendable {
    /// How many leading bytes are kept in `prefix`.
    let prefixCap: Int
    /// Bytes seen so far.
    private(set) var length = 0
    /// The first `prefixCap` bytes seen.
    private(set) var prefix: [UInt8] = []
    private var hasher = SHA256()

    init(prefixCap: Int) {
        self.prefixCap = prefixCap
    }

    /// Adds the readable bytes of `buffer`.
    mutating func add(_ buffer: ByteBuffer) {
        self.length += buffer.readableBytes
        buffer.withUnsafeReadableBytes { pointer in
            self.hasher.update(bufferPointer: pointer)
            let room = self.prefixCap - self.prefix.count
            if room > 0 {
                self.prefix.append(contentsOf: pointer.prefix(room))
            }
        }
    }

    /// Lower-case hex SHA-256 of everything added so far.
    var sha256: String {
        TestPattern.hex(self.hasher.finalize())
    }
}
