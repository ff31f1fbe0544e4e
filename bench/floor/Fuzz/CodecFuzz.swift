import ArgumentParser
import BearerCodec
import CodecFuzzing
import NIOCore

/// Feeds seeded mutations of the codec's corpus through every entry point of `BearerCodec` — request and response
/// heads, their field lines and forwarded heads, chunked bodies — the way a connection would: bytes in a
/// `ByteBuffer`, arriving in random pieces, parsed again as each piece arrives (#24 condition 1).
///
/// Its job is memory safety, not agreement (the differential tests hold the codec to its references): built in
/// release mode under AddressSanitizer by `bench/floor/sanitize.sh`, any read outside a buffer is a finding, and
/// so is a trap — a `Span` index out of bounds, an overflow — since the codec must refuse bad input, never stop on
/// it. It prints what it did, so a run that exercised nothing shows.
@main
struct CodecFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bearer-codec-fuzz",
        abstract: "Seeded mutations through BearerCodec's parsers, for a sanitizer build.")

    @Option(help: "The mutator's seed.")
    var seed: UInt64 = 1

    @Option(help: "How many mutated inputs (requests and responses alternate).")
    var inputs = 100_000

    func run() {
        var mutator = Mutator(random: SeededGenerator(seed: seed))
        let requests = (Corpus.requests + Corpus.hostile.map(\.raw)).map { Array($0.utf8) }
        let responses = Corpus.responses.map { (bytes: Array($0.raw.utf8), head: $0.head) }
        var tally = FuzzTally()
        for input in 0..<inputs {
            if input % 2 == 0 {
                let message = mutator.mutate(requests[mutator.int(requests.count)])
                tally.note(request: Self.request(mutator.split(message)))
            } else {
                let response = responses[mutator.int(responses.count)]
                let message = mutator.mutate(response.bytes)
                tally.note(response: Self.response(mutator.split(message), requestWasHead: response.head))
            }
            // Field lines read from arbitrary offsets of arbitrary bytes: bounded whatever they are given.
            let bytes = mutator.mutate(requests[mutator.int(requests.count)])
            Self.fieldLines(bytes, from: mutator.int(bytes.count + 4) - 2, length: mutator.int(bytes.count + 4) - 2)
        }
        print("seed \(seed): \(tally)")
    }

    /// Parses the head each time a piece arrives, as the data plane will; then its field lines, the forwarded head
    /// and, when chunked, the body that follows.
    static func request(_ pieces: [[UInt8]]) -> FuzzTally.Outcome {
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        for (index, piece) in pieces.enumerated() {
            buffer.writeBytes(piece)
            let head: RequestHead?
            do throws(HeadError) {
                head = try RequestHead.parse(buffer.readableBytesUInt8Span)
            } catch {
                return .refused
            }
            guard let head else { continue }
            oneWrite(buffer.readableBytesUInt8Span, fieldsStart: head.fieldsStart, length: head.length, seed: index) {
                $0.append(buffer.readableBytesUInt8Span.extracting(0..<head.fieldsStart))
            } pieces: {
                $0.writeBytes(buffer.readableBytesUInt8Span.extracting(0..<head.fieldsStart).bytes)
            }
            let lines = fieldLineCount(buffer.readableBytesUInt8Span, from: head.fieldsStart, length: head.length)
            buffer.moveReaderIndex(forwardBy: head.length)
            if head.framing == .chunked { _ = chunked(buffer, rest: pieces[(index + 1)...]) }
            return .accepted(fields: lines)
        }
        return .incomplete
    }

    static func response(_ pieces: [[UInt8]], requestWasHead: Bool) -> FuzzTally.Outcome {
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        for (index, piece) in pieces.enumerated() {
            buffer.writeBytes(piece)
            let head: ResponseHead?
            do throws(HeadError) {
                head = try ResponseHead.parse(buffer.readableBytesUInt8Span, requestWasHead: requestWasHead)
            } catch {
                return .refused
            }
            guard let head else { continue }
            let minor = index % 2
            oneWrite(buffer.readableBytesUInt8Span, fieldsStart: head.fieldsStart, length: head.length, seed: index) {
                head.writeStatusLine(buffer.readableBytesUInt8Span, minorVersion: minor, into: &$0)
            } pieces: {
                head.writeStatusLine(buffer.readableBytesUInt8Span, minorVersion: minor, into: &$0)
            }
            let lines = fieldLineCount(buffer.readableBytesUInt8Span, from: head.fieldsStart, length: head.length)
            buffer.moveReaderIndex(forwardBy: head.length)
            if head.framing == .chunked { _ = chunked(buffer, rest: pieces[(index + 1)...]) }
            return .accepted(fields: lines)
        }
        return .incomplete
    }

    /// Writes an accepted head's start line (`start`) and every other field line in one ``HeadBytes`` write, within a
    /// bound that is mostly too small — so each pass's copies are checked against their room, and passes are thrown
    /// away — and traps unless the bytes are those that ByteBuffer's own writes make of the same pieces.
    static func oneWrite(
        _ bytes: Span<UInt8>, fieldsStart: Int, length: Int, seed: Int, start: (inout HeadBytes) -> Void,
        pieces startPieces: (inout ByteBuffer) -> Void
    ) {
        var odd = false
        let drop: (FieldLine) -> Bool = { _ in
            odd.toggle()
            return odd
        }
        var whole = ByteBufferAllocator().buffer(capacity: 0)
        whole.writeHead(bound: (length &* 7 &+ seed) % 97) { out in
            odd = false
            start(&out)
            HeadWriter.copyFields(bytes, fieldsStart: fieldsStart, length: length, into: &out, drop: drop)
            out.append("x-request-id: ")
            out.append(contentsOf: String(seed))
            out.append("\r\n\r\n")
        }
        odd = false
        var pieces = ByteBufferAllocator().buffer(capacity: 0)
        startPieces(&pieces)
        HeadWriter.copyFields(bytes, fieldsStart: fieldsStart, length: length, into: &pieces, drop: drop)
        pieces.writeString("x-request-id: \(seed)\r\n\r\n")
        precondition(whole == pieces, "HeadBytes wrote other bytes than ByteBuffer's writes of the same pieces")
    }

    /// Reads a chunked body from what followed the head and the pieces after it, each piece as it would arrive.
    static func chunked(_ first: ByteBuffer, rest: ArraySlice<[UInt8]>) -> Bool {
        var body = ChunkedBody()
        var buffer = first
        var pieces = rest.makeIterator()
        while true {
            var index = 0
            do throws(HeadError) {
                let bytes = buffer.readableBytesUInt8Span
                while index < bytes.count, !body.isComplete {
                    let run = try body.next(in: bytes, from: index)
                    if run.end == index { break }
                    index = run.end
                }
            } catch {
                return false
            }
            buffer.moveReaderIndex(forwardBy: index)
            if body.isComplete { return true }
            guard let piece = pieces.next() else { return false }
            buffer.writeBytes(piece)
        }
    }

    static func fieldLineCount(_ bytes: Span<UInt8>, from start: Int, length: Int) -> Int {
        var lines = FieldLines(fieldsStart: start, length: length)
        var count = 0
        while lines.next(in: bytes) != nil { count += 1 }
        return count
    }

    static func fieldLines(_ bytes: [UInt8], from start: Int, length: Int) {
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        _ = fieldLineCount(buffer.readableBytesUInt8Span, from: max(start, 0), length: length)
    }
}
