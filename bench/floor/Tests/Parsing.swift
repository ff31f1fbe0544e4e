import BenchHeadParser

/// The parser's entry points over arrays, with the typed error kept (`withUnsafeBytes` only rethrows).
extension Array where Element == UInt8 {
    func parseRequest() -> Result<RequestHead?, HeadError> {
        withUnsafeBytes { bytes in Result { () throws(HeadError) in try RequestHead.parse(bytes) } }
    }

    func parseResponse(requestWasHead: Bool) -> Result<ResponseHead?, HeadError> {
        withUnsafeBytes { bytes in
            Result { () throws(HeadError) in try ResponseHead.parse(bytes, requestWasHead: requestWasHead) }
        }
    }

    /// Runs `body` through `chunked`, piece by piece: the spans read, or the refusal.
    func readChunks(_ chunked: inout ChunkedBody) -> Result<[(kind: ChunkedBody.Kind, bytes: [UInt8])], HeadError> {
        withUnsafeBytes { bytes in
            Result { () throws(HeadError) in
                var spans: [(kind: ChunkedBody.Kind, bytes: [UInt8])] = []
                var index = 0
                while index < bytes.count, !chunked.isComplete {
                    let span = try chunked.next(in: bytes, from: index)
                    if span.end == index { break }
                    spans.append((span.kind, Array(bytes[index..<span.end])))
                    index = span.end
                }
                return spans
            }
        }
    }
}
