@testable import BearerCodec

/// The prototype's parser fed the same pieces: the head re-parsed on every piece until it is complete (as the
/// proxy does), the body delimited by its framing, chunked bodies through `ChunkedBody` piece by piece.
enum StrictReference {
    static func request(_ pieces: [[UInt8]]) -> Outcome {
        var buffer: [UInt8] = []
        for (index, piece) in pieces.enumerated() {
            buffer += piece
            let parsed: RequestHead?
            switch buffer.parseRequest() {
            case .success(let head): parsed = head
            case .failure(let error): return .refused("ours: \(error)")
            }
            guard let head = parsed else { continue }
            let fields = Self.fields(buffer, from: head.fieldsStart, length: head.length)
            let start = [
                String(decoding: buffer[head.method], as: UTF8.self),
                String(decoding: buffer[head.target], as: UTF8.self),
            ]
            let first = DecodedMessage.Head(start: start, minorVersion: Int(head.minorVersion), fields: fields)
            let rest = [Array(buffer[head.length...])] + pieces[(index + 1)...]
            return body(rest, framing: head.framing, atEOF: false, heads: [first])
        }
        return .incomplete
    }

    static func response(_ pieces: [[UInt8]], requestWasHead: Bool) -> Outcome {
        var buffer: [UInt8] = []
        var heads: [DecodedMessage.Head] = []
        var index = 0
        var pieceIndex = 0
        // Heads are parsed from `buffer[index...]`; informational ones are followed by another head.
        while true {
            let parsed: ResponseHead?
            switch Array(buffer[index...]).parseResponse(requestWasHead: requestWasHead) {
            case .success(let head): parsed = head
            case .failure(let error): return .refused("ours: \(error)")
            }
            if let head = parsed {
                let fields = Self.fields(Array(buffer[index...]), from: head.fieldsStart, length: head.length)
                heads.append(
                    DecodedMessage.Head(start: ["\(head.status)"], minorVersion: Int(head.minorVersion), fields: fields)
                )
                index += head.length
                if head.isInformational { continue }
                let rest = [Array(buffer[index...])] + pieces[pieceIndex...]
                return body(rest, framing: head.framing, atEOF: true, heads: heads)
            }
            guard pieceIndex < pieces.count else { return .incomplete }
            buffer += pieces[pieceIndex]
            pieceIndex += 1
        }
    }

    private static func body(_ pieces: [[UInt8]], framing: BodyFraming, atEOF: Bool, heads: [DecodedMessage.Head])
        -> Outcome
    {
        var body: [UInt8] = []
        var trailerBytes: [UInt8] = []
        switch framing {
        case .none:
            break
        case .length(let length):
            let all = pieces.joined()
            guard all.count >= length else { return .incomplete }
            body = Array(all.prefix(length))
        case .untilClose:
            body = Array(pieces.joined())
            if !atEOF { return .incomplete }
        case .chunked:
            var chunked = ChunkedBody()
            for piece in pieces where !chunked.isComplete {
                switch piece.readChunks(&chunked) {
                case .success(let spans):
                    for span in spans {
                        switch span.kind {
                        case .data: body += span.bytes
                        case .trailer: trailerBytes += span.bytes
                        case .framing: break
                        }
                    }
                case .failure(let error):
                    return .refused("ours, chunked body: \(error)")
                }
            }
            guard chunked.isComplete else { return .incomplete }
        }
        return .message(DecodedMessage(heads: heads, body: body, trailers: trailers(trailerBytes)))
    }

    private static func fields(_ bytes: [UInt8], from start: Int, length: Int) -> [DecodedMessage.Field] {
        var lines = FieldLines(fieldsStart: start, length: length)
        var fields: [DecodedMessage.Field] = []
        while let line = lines.next(in: bytes.span) {
            fields.append(
                DecodedMessage.Field(name: Array(bytes[line.field.name]), value: Array(bytes[line.field.value])))
        }
        return fields
    }

    /// Trailer lines as `ChunkedBody` passed them (validated): `name ":" OWS value OWS CRLF` each.
    private static func trailers(_ bytes: [UInt8]) -> [DecodedMessage.Field] {
        var fields: [DecodedMessage.Field] = []
        var lineStart = 0
        while let cr = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\r")) {
            let line = bytes[lineStart..<cr]
            let colon = line.firstIndex(of: UInt8(ascii: ":"))!
            var value = bytes[(colon + 1)..<cr]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            fields.append(DecodedMessage.Field(name: Array(bytes[lineStart..<colon]), value: Array(value)))
            lineStart = cr + 2
        }
        return fields
    }
}
