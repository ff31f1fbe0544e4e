import NIOCore

/// What both decoders do between a head and its end: find where a Content-Length or chunked body ends, in bytes
/// that arrive in any pieces, and hand its data on as slices of the bytes read (never copied). Framing bytes are
/// dropped; the trailer section's bytes go to whoever wants them (``ResponseDecoder``; requests drop them, SPEC §8).
struct BodyReader {
    private enum Framing {
        case length(remaining: Int)
        case chunked(ChunkedBody)
    }

    private var framing: Framing

    /// A body of `length` bytes (more than 0).
    init(length: Int) {
        framing = .length(remaining: length)
    }

    /// A chunked body (RFC 9112 §7.1).
    init(chunked: ChunkedBody) {
        framing = .chunked(chunked)
    }

    /// Reads what `buffer` holds of the body: data to `data`, trailer bytes to `trailer`, framing dropped. True when
    /// the body's last byte has been read (the bytes after it stay in `buffer`); false when it needs more — or,
    /// with `oneRun`, when it has handed on one run of data (for a decoder that delivers a part per call).
    package mutating func read(
        _ buffer: inout ByteBuffer, oneRun: Bool = false, data: (ByteBuffer) -> Void,
        trailer: (ByteBuffer) -> Void = { _ in }
    ) throws -> Bool {
        switch framing {
        case .length(let remaining):
            guard buffer.readableBytes > 0 else { return false }
            let count = min(remaining, buffer.readableBytes)
            data(buffer.readSlice(length: count)!)
            framing = .length(remaining: remaining - count)
            return count == remaining
        case .chunked(var body):
            defer { framing = .chunked(body) }
            while buffer.readableBytes > 0 {
                let run = try body.next(in: buffer.readableBytesUInt8Span, from: 0)
                guard run.end > 0 else { break }
                let bytes = buffer.readSlice(length: run.end)!
                switch run.kind {
                case .data: data(bytes)
                case .trailer: trailer(bytes)
                case .framing: break
                }
                if body.isComplete { return true }
                if oneRun, case .data = run.kind { return false }
            }
            return false
        }
    }
}
