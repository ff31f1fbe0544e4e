/// Seeded mutations of corpus streams, aimed at the bytes parsers disagree on: line ends, whitespace, separators,
/// framing fields and digits. The same seed gives the same inputs everywhere (``SplitMix64``).
struct StreamMutator {
    private var random: SplitMix64
    private let seeds: [DifferentialInput]

    /// The bytes that matter to a head or a chunk parser.
    static let interestingBytes: [UInt8] =
        Array("\r\n \t\0:;,=\"\\/?#%+-0123456789aAfFxX".utf8) + [
            0x0B, 0x0C, 0x7F, 0x80, 0xA0, 0xC3, 0xFF,
        ]

    /// Field lines and chunk lines to insert at a line start.
    static let interestingLines: [String] = [
        "Content-Length: 0", "Content-Length: 5", "Content-Length: 3, 3", "Transfer-Encoding: chunked",
        "Transfer-Encoding: chunked, identity", "Transfer-Encoding: identity", "Connection: close",
        "Connection: keep-alive", "Connection: upgrade", "Upgrade: websocket", "Expect: 100-continue", "X: a",
        " folded", "Host: {HOST}", "Trailer: X", "0", "3", "0;x=y", "",
        // From the published classes (SmugglingCorpus+Published.swift): TE.TE obfuscations, Expect, chunk lines.
        "Transfer-Encoding: \"chunked\"", "Transfer-Encoding:\u{B}chunked", "Expect: y 100-continue", "3;a=\"b\rc\"",
    ]

    init(seed: UInt64, seeds: [DifferentialInput]) {
        random = SplitMix64(seed: seed)
        self.seeds = seeds
    }

    private mutating func below(_ bound: Int) -> Int {
        Int.random(in: 0..<max(bound, 1), using: &random)
    }

    /// The next input: a seed with one to four mutations, read in one to five pieces.
    mutating func next(host: String = "127.0.0.1:8080") -> DifferentialInput {
        var input = seeds[below(seeds.count)]
        var steps: [String] = []
        for _ in 0...below(4) { steps.append(mutate(&input.bytes, host: host)) }
        input.name += " ~ " + steps.joined(separator: ", ")
        input.splits = splits(of: input.bytes.count)
        return input
    }

    /// One mutation, named for the report.
    private mutating func mutate(_ bytes: inout [UInt8], host: String) -> String {
        let position = below(bytes.count + 1)
        let byte = Self.interestingBytes[below(Self.interestingBytes.count)]
        switch below(9) {
        case 0:
            bytes.insert(byte, at: position)
            return "insert \(byte) at \(position)"
        case 1 where !bytes.isEmpty:
            bytes.remove(at: min(position, bytes.count - 1))
            return "delete at \(position)"
        case 2 where !bytes.isEmpty:
            bytes[min(position, bytes.count - 1)] = byte
            return "replace at \(position) with \(byte)"
        case 3:
            let starts = lineStarts(bytes)
            let at = starts.isEmpty ? 0 : starts[below(starts.count)]
            let line = Self.interestingLines[below(Self.interestingLines.count)].replacing("{HOST}", with: host)
            bytes.insert(contentsOf: Array(line.utf8) + [0x0D, 0x0A], at: at)
            return "line \(line.debugDescription) at \(at)"
        case 4:
            // A line end cut to a bare CR or a bare LF.
            let ends = lineStarts(bytes).filter { $0 >= 2 && bytes[$0 - 2] == 0x0D }
            guard !ends.isEmpty else { return "no line end" }
            let end = ends[below(ends.count)]
            let cr = below(2) == 0
            bytes.remove(at: cr ? end - 1 : end - 2)
            return "bare \(cr ? "CR" : "LF") at \(end)"
        case 5:
            // Another stream's bytes after a prefix of this one: a pipelined pair, or a message cut into another.
            let other = seeds[below(seeds.count)]
            let cut = below(2) == 0 ? bytes.count : position
            bytes = Array(bytes[..<cut]) + other.bytes
            return "splice \(other.name.debugDescription) at \(cut)"
        case 6:
            // A run of the stream repeated: a duplicated field line or chunk.
            let length = 1 + below(24)
            let start = min(position, max(bytes.count - length, 0))
            let run = Array(bytes[start..<min(start + length, bytes.count)])
            bytes.insert(contentsOf: run, at: start)
            return "repeat \(length) at \(start)"
        case 7:
            // A digit changed: a Content-Length or a chunk size that no longer matches.
            let digits = bytes.indices.filter { (0x30...0x39).contains(bytes[$0]) }
            guard !digits.isEmpty else { return "no digit" }
            let at = digits[below(digits.count)]
            bytes[at] = UInt8(0x30 + below(10))
            return "digit at \(at)"
        default:
            let cut = below(bytes.count + 1)
            bytes.removeSubrange(cut...)
            return "truncate at \(cut)"
        }
    }

    /// Where each line after the first begins.
    private func lineStarts(_ bytes: [UInt8]) -> [Int] {
        bytes.indices.filter { bytes[$0] == 0x0A }.map { $0 + 1 }
    }

    /// Zero to four read boundaries inside a stream of `count` bytes.
    mutating func splits(of count: Int) -> [Int] {
        guard count > 1 else { return [] }
        var splits = Set<Int>()
        for _ in 0..<below(5) { splits.insert(1 + below(count - 1)) }
        return splits.sorted()
    }
}
