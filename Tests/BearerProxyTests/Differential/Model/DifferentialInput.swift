/// One byte stream of the differential harness: what a client (or an upstream) sends on one connection, and the
/// offsets at which the reads of the receiving side end (RFC 9112 §2.2: a parser must frame the same stream the
/// same way however it arrives).
struct DifferentialInput: Sendable, Hashable, CustomStringConvertible {
    /// The corpus family the input comes from (a mutation keeps its seed's family).
    var family: String
    /// The corpus entry's name, with the mutations made to it.
    var name: String
    var bytes: [UInt8]
    /// Offsets strictly inside `bytes`, ascending, where one read ends and the next begins.
    var splits: [Int] = []

    /// `bytes` cut at `splits`.
    var pieces: [[UInt8]] {
        var pieces: [[UInt8]] = []
        var start = 0
        for split in splits + [bytes.count] where split > start && split <= bytes.count {
            pieces.append(Array(bytes[start..<split]))
            start = split
        }
        return pieces.isEmpty ? [bytes] : pieces
    }

    /// The same stream, read in pieces that end at `splits`.
    func read(splitAt splits: [Int]) -> DifferentialInput {
        var input = self
        input.splits = splits
        return input
    }

    /// The bytes as a Swift string literal, byte for byte (`\r`, `\n`, `\t`, `\u{XX}` for every other byte
    /// outside printable ASCII): what a finding quotes so that it can be replayed (`Latin1.bytes` reads it back).
    var escaped: String {
        var text = "\""
        for byte in bytes {
            switch byte {
            case 0x0D: text += "\\r"
            case 0x0A: text += "\\n"
            case 0x09: text += "\\t"
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\u{" + String(byte, radix: 16, uppercase: true) + "}"
            }
        }
        return text + "\""
    }

    var description: String { "\(family) / \(name)" }
}
