/// SplitMix64: a small, seeded, deterministic generator, so the fuzz run is the same everywhere.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        self.state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Mutations of valid messages aimed at the places parsers disagree: framing fields, line ends, whitespace,
/// bytes outside the grammar, case, order, versions, methods.
package struct Mutator {
    package var random: SeededGenerator

    package init(random: SeededGenerator) {
        self.random = random
    }

    package static let specialBytes: [UInt8] = [
        0x0D, 0x0A, 0x20, 0x09, 0x00, 0x0B, 0x0C, 0x7F, 0x80, 0xC3, 0xFF, 0x3A, 0x2C, 0x3B, 0x22, 0x5C, 0x25, 0x23,
        0x3F, 0x2F, 0x41, 0x61, 0x30, 0x2B, 0x2D,
    ]

    package static let insertedLines: [String] = [
        "Content-Length: 5", "Content-Length: 0", "content-length:  5 ", "Content-Length: 05", "Content-Length: +5",
        "Content-Length: 5, 5", "Content-Length: 5 5", "Content-Length:", "Transfer-Encoding: chunked",
        "transfer-encoding: Chunked", "Transfer-Encoding: gzip, chunked", "Transfer-Encoding: chunked, identity",
        "Transfer-Encoding:chunked", "Transfer-Encoding: chunked ", "Transfer-Encoding: xchunked", " folded",
        "\tfolded", "Host: other.example", "Host:", "Connection: content-length", "Connection: close",
        "Connection: keep-alive", "Connection: x-custom", "Connection: ,,", "Connection: a b", "X-Custom: 1",
        "TE: trailers", "Upgrade: websocket", "Connection: upgrade", "Trailer: X", "Expect: 100-continue",
        "X : y", "X\t: y", ": novalue", "X-A: a\rb", "X-B: \u{7}", "X-C: caf\u{E9}", "Authorization: Bearer c",
    ]

    package static let versions = [
        "HTTP/1.0", "HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "http/1.1", "HTTP/1.10", "HTTP/11", "HTTP/1.1 ",
    ]
    package static let methods = [
        "get", "PROPFIND", "FOO", "CONNECT", "PURGE", "MKCALENDAR", "M-SEARCH", "G ET", "GET\t",
    ]

    package mutating func int(_ bound: Int) -> Int {
        Int.random(in: 0..<max(bound, 1), using: &random)
    }

    /// 1–3 mutations of `seed`.
    package mutating func mutate(_ seed: [UInt8]) -> [UInt8] {
        var bytes = seed
        for _ in 0...int(3) { mutateOnce(&bytes) }
        return bytes
    }

    /// The positions right after each CRLF in the head (where lines start), the head's end excluded.
    private func lineStarts(_ bytes: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A {
                if index + 3 < bytes.count, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
                    starts.append(index + 2)
                    return starts
                }
                starts.append(index + 2)
            }
            index += 1
        }
        return starts
    }

    private mutating func mutateOnce(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        let position = int(bytes.count)
        let special = Self.specialBytes[int(Self.specialBytes.count)]
        switch int(12) {
        case 0: bytes[position] ^= UInt8(1) << UInt8(int(8))
        case 1: bytes[position] = special
        case 2: bytes.insert(special, at: position)
        case 3: bytes.remove(at: position)
        case 4, 5:
            let starts = lineStarts(bytes)
            guard let at = starts.randomElement(using: &random) else { return }
            bytes.insert(contentsOf: Array((Self.insertedLines[int(Self.insertedLines.count)] + "\r\n").utf8), at: at)
        case 6:
            // duplicate or move a field line
            let starts = lineStarts(bytes)
            guard starts.count >= 3 else { return }
            let line = int(starts.count - 2)
            let range = starts[line]..<starts[line + 1]
            let copy = Array(bytes[range])
            if int(2) == 0 { bytes.removeSubrange(range) }
            let target = lineStarts(bytes).randomElement(using: &random) ?? 0
            bytes.insert(contentsOf: copy, at: min(target, bytes.count))
        case 7:
            // change the case of a run of letters
            for index in position..<min(position + 1 + int(12), bytes.count) where ByteLetters.isLetter(bytes[index]) {
                bytes[index] ^= 0x20
            }
        case 8:
            // break a CRLF into CR or LF alone
            guard let crlf = lineStarts(bytes).randomElement(using: &random) else { return }
            bytes.remove(at: crlf - (int(2) == 0 ? 1 : 2))
        case 9:
            replace(&bytes, "HTTP/1.1", with: Self.versions[int(Self.versions.count)])
        case 10:
            guard let space = bytes.firstIndex(of: 0x20) else { return }
            bytes.replaceSubrange(0..<space, with: Array(Self.methods[int(Self.methods.count)].utf8))
        default:
            bytes.removeSubrange(position...)
        }
    }

    private func replace(_ bytes: inout [UInt8], _ old: String, with new: String) {
        let old = Array(old.utf8)
        guard bytes.count >= old.count else { return }
        for index in 0...(bytes.count - old.count) where Array(bytes[index..<(index + old.count)]) == old {
            bytes.replaceSubrange(index..<(index + old.count), with: Array(new.utf8))
            return
        }
    }

    /// The input cut into 1–4 reads.
    package mutating func split(_ bytes: [UInt8]) -> [[UInt8]] {
        guard bytes.count > 1 else { return [bytes] }
        var cuts = (0..<int(4)).map { _ in 1 + int(bytes.count - 1) }
        cuts.sort()
        var pieces: [[UInt8]] = []
        var start = 0
        for cut in cuts where cut > start {
            pieces.append(Array(bytes[start..<cut]))
            start = cut
        }
        pieces.append(Array(bytes[start...]))
        return pieces
    }
}

package enum ByteLetters {
    package static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
}
